import type { Clock } from '../clock.js'
import { ABANDONED } from './exchange.js'
import type { NodeRead } from './failover.js'
import { Hedging } from './hedging.js'
import type { ChainNode, ChainNodes } from './nodes.js'
import type { ChainObserver, Outcome } from './types.js'

// The hedged race of one read (docs/hedged-reads.md): hedging.ts holds the policy (each
// node's delay, the budget); this file sends the second attempt and ends the race.

export interface HedgingSettings {
  /** Hedges at most this share of reads over the window (EDGE_API_HEDGE); 0: no hedging. */
  readonly budget: number
  /** The shortest delay before a hedge (EDGE_API_HEDGE_MIN_DELAY). */
  readonly minDelayMs: number
  /** The longest. @default MAX_HEDGE_DELAY_MS, and never beyond half the chain timeout */
  readonly maxDelayMs?: number
  /** The budget's window. @default 10 s */
  readonly windowMs?: number
  /** Whether the replica is shedding requests: no hedges meanwhile. @default never */
  readonly shedding?: () => boolean
}

/**
 * The longest a read waits before it is hedged, however slow its node has been: a gateway
 * answers most reads in milliseconds, and a hedge later than this would rescue little.
 */
export const MAX_HEDGE_DELAY_MS = 1000

export interface HedgedReadsOptions {
  readonly settings: HedgingSettings | undefined
  readonly nodes: ChainNodes
  /** One chain request's limit: the longest delay is at most half of it. */
  readonly timeoutMs: number
  /** Whether the chain client's own queue is crowded: no hedges meanwhile. */
  readonly crowded: () => boolean
  readonly observer: ChainObserver
  readonly clock?: Clock | undefined
}

/** One attempt of a read on one node, abortable on its own (the loser of a hedged read). */
interface Attempt {
  readonly node: ChainNode
  /** When it was sent, on the hedging clock. */
  readonly sent: number
  readonly controller: AbortController
  readonly ended: Promise<{ readonly attempt: Attempt, readonly outcome: Outcome }>
}

/** Hedged reads of one chain client: a read whose node has not answered after its delay gets a second attempt on another node. */
export class HedgedReads {
  readonly #hedging: Hedging
  readonly #nodes: ChainNodes
  readonly #overloaded: () => boolean
  readonly #observer: ChainObserver

  /** The hedged reads of these settings; undefined when hedging is off (no budget, or a single node: nobody to hedge to). */
  static create (options: HedgedReadsOptions): HedgedReads | undefined {
    const { settings, nodes } = options
    if (settings === undefined || settings.budget <= 0 || nodes.all.length < 2) return undefined
    return new HedgedReads(options, settings)
  }

  private constructor (options: HedgedReadsOptions, settings: HedgingSettings) {
    this.#hedging = new Hedging({
      budget: settings.budget,
      minDelayMs: settings.minDelayMs,
      maxDelayMs: Math.min(settings.maxDelayMs ?? MAX_HEDGE_DELAY_MS, options.timeoutMs / 2),
      nodeCount: options.nodes.all.length,
      windowMs: settings.windowMs,
      clock: options.clock
    })
    this.#nodes = options.nodes
    const shedding = settings.shedding ?? (() => false)
    this.#overloaded = () => shedding() || options.crowded()
    this.#observer = options.observer
  }

  /**
   * A read with failover and one hedge at most: once the first node has not answered after
   * its delay, the same read goes to the best node not tried yet, if the budget allows. The
   * first answer (or definite error) ends the read and aborts the attempt still running; a
   * node that fails to answer while the other attempt runs leaves the read to that attempt.
   */
  async run (read: NodeRead): Promise<Outcome> {
    const hedging = this.#hedging
    hedging.read()
    const { signal } = read.deadline
    const running = new Set<Attempt>()
    const start = (node: ChainNode, hedge: boolean): Attempt => this.#start(read, running, node, hedge)
    start(read.first, false)
    // Set at once: a promise's executor runs before its constructor returns.
    let cancel!: () => void
    let due: Promise<'due'> | undefined = new Promise((resolve) => {
      cancel = hedging.clock.after(hedging.delayMs(read.first.index), () => { resolve('due') })
    })
    let hedge: Attempt | undefined
    try {
      for (;;) {
        const next = await Promise.race([...[...running].map(async (a) => a.ended), ...(due === undefined ? [] : [due])])
        if (next === 'due') {
          due = undefined
          // One hedge per read, beside the one attempt running (the first, or its failover).
          if (running.size === 1 && !signal.aborted) hedge = this.#sendHedge(read, start)
          continue
        }
        const { attempt, outcome } = next
        running.delete(attempt)
        const another = outcome.ok || !outcome.tryNext ? undefined : running.size > 0 ? 'waiting' : read.next()
        if (another === 'waiting') continue
        if (another !== undefined) {
          start(another, false)
          continue
        }
        this.#recordRace(attempt, outcome, hedge, running)
        return outcome
      }
    } finally {
      cancel()
      for (const attempt of running) attempt.controller.abort(ABANDONED)
    }
  }

  /** Sends one attempt of `read` to `node`, added to `running`; it ends with the read's deadline too. */
  #start (read: NodeRead, running: Set<Attempt>, node: ChainNode, hedge: boolean): Attempt {
    const hedging = this.#hedging
    const { signal } = read.deadline
    const controller = new AbortController()
    // The read's deadline and abortAll reach every attempt; a lost race only its own.
    const forward = (): void => { controller.abort(signal.reason) }
    signal.addEventListener('abort', forward, { once: true })
    const sent = hedging.clock.now()
    const attempt: Attempt = {
      node,
      sent,
      controller,
      ended: read.ask(node, { signal: controller.signal, hedge }).then((outcome) => {
        if (outcome.ok) hedging.answered(node.index, hedging.clock.now() - sent)
        return { attempt, outcome }
      }).finally(() => { signal.removeEventListener('abort', forward) })
    }
    running.add(attempt)
    return attempt
  }

  /** Counts how the read's race ended: the hedge's result, and the attempts it overtook. */
  #recordRace (attempt: Attempt, outcome: Outcome, hedge: Attempt | undefined, running: ReadonlySet<Attempt>): void {
    if (hedge !== undefined) {
      const won = attempt === hedge && outcome.ok
      this.#observer.hedged?.(won ? 'won' : outcome.ok ? 'lost' : 'failed')
      // The attempt a hedge overtook waited its delay and the hedge's whole answer: a node
      // that keeps losing so is hanging, and is skipped as one that does not answer.
      if (won) for (const other of running) this.#nodes.overtaken(other.node)
    }
    const now = this.#hedging.clock.now()
    if (outcome.ok) for (const other of running) this.#hedging.overtaken(other.node.index, now - other.sent)
  }

  /** Sends the hedge of a read if the budget and the replica's load allow, to the best node not tried yet. */
  #sendHedge (read: NodeRead, start: (node: ChainNode, hedge: boolean) => Attempt): Attempt | undefined {
    const node = read.next()
    // A node that is down is no better bet than the one the read waits for.
    const skip = node === undefined || !node.healthy ? 'no_node' : this.#hedging.admit(this.#overloaded())
    if (skip !== undefined) {
      this.#observer.hedgeSkipped?.(skip)
      return undefined
    }
    return start(node as ChainNode, true)
  }
}
