import type { NodeLog } from './nodes.js'

// Whether this replica knows its chain's heights (docs/heights-and-cache.md, "When no node
// tells its head"): a state machine driven only by the head poll's own outcome, never by the
// answers that happen to arrive while a poll is in flight: those made the state flap every
// few seconds when blocks/latest hung or was filtered (review A3).

/** starting: no poll has ended yet; known: the last poll told a head; unknown: it told none. */
export type HeightsState = 'starting' | 'known' | 'unknown'

/** How a round of the head poll ended: told (a node told its height) or silent (none did: failed, hung, filtered, no height). */
export type PollOutcome = 'told' | 'silent'

/** Every transition, in one place. */
export const TRANSITIONS: Readonly<Record<HeightsState, Readonly<Record<PollOutcome, HeightsState>>>> = {
  starting: { told: 'known', silent: 'unknown' },
  known: { told: 'known', silent: 'unknown' },
  unknown: { told: 'known', silent: 'unknown' }
}

/** The warn line when no node's head poll tells a head any more, and the one when one does again. */
export const HEIGHTS_UNKNOWN = 'chain heights unknown; serving latest-state reads unpinned'
export const HEIGHTS_KNOWN = 'chain heights known again; latest-state reads pinned to the head'

/**
 * The known/unknown state. While unknown, latest-state reads wait for no poll and go unpinned,
 * while the poll keeps asking in the background; one warn line per change (none for the
 * first poll telling a head); `known` is the edge_api_chain_heights_known gauge.
 */
export class HeightsKnowledge {
  readonly #log: NodeLog
  #state: HeightsState = 'starting'

  constructor (log: NodeLog) {
    this.#log = log
  }

  get state (): HeightsState {
    return this.#state
  }

  /** False only while the last poll told no head. */
  get known (): boolean {
    return this.#state !== 'unknown'
  }

  /** A round of the head poll ended with `outcome`; `fields` go on the warn line of a change. */
  polled (outcome: PollOutcome, fields: object): void {
    const next = TRANSITIONS[this.#state][outcome]
    const was = this.#state
    this.#state = next
    if (next === 'unknown' && was !== 'unknown') this.#log.warn(fields, HEIGHTS_UNKNOWN)
    if (next === 'known' && was === 'unknown') this.#log.warn(fields, HEIGHTS_KNOWN)
  }
}
