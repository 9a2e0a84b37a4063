import { eventsAt, type ChainEvent } from './chain-events.js'
import type { EpochAnchor } from './epoch-anchor.js'

// The chain's events by height (src/chain/chain-events.ts), each height's worked out once per
// replica and shared by every stream that sends it, live or replaying: a stream's cost per
// block is a lookup, and the chain's is one epoch read per epoch (src/chain/epoch-anchor.ts).

/** The events at `height`, each height's kept while it is within `keep` heights of the newest asked. */
export class ChainEventLog {
  readonly #anchor: Pick<EpochAnchor, 'at'>
  readonly #keep: number
  readonly #byHeight = new Map<number, Promise<ChainEvent[]>>()

  constructor (anchor: Pick<EpochAnchor, 'at'>, keep: number) {
    this.#anchor = anchor
    this.#keep = keep
  }

  /** The events at `height`, in order. */
  async at (height: number): Promise<ChainEvent[]> {
    const kept = this.#byHeight.get(height)
    if (kept !== undefined) return kept
    const events = this.#anchor.at(height).then((anchor) => {
      // Without an epoch every replica could tell apart, nothing is kept: the next ask reads again.
      if (anchor === undefined) this.#byHeight.delete(height)
      return eventsAt(height, anchor)
    })
    this.#byHeight.set(height, events)
    for (const old of this.#byHeight.keys()) {
      if (old > height - this.#keep) break
      this.#byHeight.delete(old)
    }
    return events
  }
}
