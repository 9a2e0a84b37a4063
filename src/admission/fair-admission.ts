import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import { REAL_CLOCK, type Clock } from '../clock.js'
import { clientOf } from './client-identity.js'
import { ExcessPace } from './excess-pace.js'
import { FairShare } from './fair-share.js'
import { HOLD_LIMIT, RefusalHold } from './refusal-hold.js'
import { REFUSALS } from './refusals.js'
import type { ShedReason } from '../metrics/labels.js'
import type { Shedding } from './shedding.js'
import { TopClients, type TopClientsLog } from './top-clients.js'

// Fair share on /v1, with no configuration: which client a request is (client-identity.ts),
// how much each has in flight (fair-share.ts), and what a request gets when the replica must
// refuse some: the client over its share gets 429 + Retry-After, held for that long
// (refusal-hold.ts); a client under it is served while a heavier one is refused; when no
// client is over its share, the overload is the replica's own and the refusal a 503 (shedding.ts).
// A client far over its share is paced (excess-pace.ts): let in at a rate that halves at each
// sample finding the event loop busy or behind, and grows while it keeps up; what it
// would take past that point is the others' latency (measured beside a closed loop of 1,024
// connections: refusing it whole while busy took the polite clients' p50 from 18-22 ms to
// 4-5 ms; pacing it instead of swinging between all and nothing, and sending held refusals
// at a bounded rate, their p99 from 90-221 ms to 37-64 ms, three alternating pairs;
// BENCHMARKS.md, benchmark 16).
// The queues further in (the chain reads', the optional routes') are fair by themselves
// (fair-queue.ts), told the client as request.readClient (src/cache/read-context.ts), which
// the request's chain readers carry down to them. docs/overload.md.

declare module 'fastify' {
  interface FastifyInstance {
    /** Fair share on /v1: each client's requests in flight, its refusals, the top clients' line. */
    fairAdmission: FairAdmission
  }
}

/** Seconds a client's excess is told to wait, and is held before it is told (refusals.ts). */
export const RETRY_AFTER_S = REFUSALS.fairShare.retryAfterS
export const TOP_CLIENTS_INTERVAL_MS = 60_000
/** How often the share takes stock of the clients (fair-share.ts). */
export const SAMPLE_MS = 100
/** At or above this utilisation of the event loop the replica is busy (LoopLoad). */
export const BUSY_UTILIZATION = 0.85

/**
 * How loaded the event loop is, from the last sample: `behind` at or over the target delay
 * (any client over its share is refused), `busy` at a quarter of it or with the loop nearly
 * always running (a client far over its share is refused), `keepingUp` otherwise.
 */
export type LoopLoad = 'keepingUp' | 'busy' | 'behind'

/**
 * The load of the last sample. `targetMs` 0 (no delay-based shedding) is never `behind`, and
 * `busy` by utilisation alone: the far-over clients' pace still follows the load (measured
 * frozen, it held such a client at ~11 answers a second on an idle replica).
 */
export function loopLoad (last: { readonly delayMs: number, readonly utilization: number }, targetMs: number): LoopLoad {
  if (targetMs <= 0) return last.utilization >= BUSY_UTILIZATION ? 'busy' : 'keepingUp'
  if (last.delayMs >= targetMs) return 'behind'
  return last.delayMs >= targetMs / 4 || last.utilization >= BUSY_UTILIZATION ? 'busy' : 'keepingUp'
}

export interface FairAdmissionOptions {
  readonly log: TopClientsLog
  readonly shedding: Shedding
  readonly clock?: Clock
  readonly topClientsIntervalMs?: number
  readonly holdLimit?: number
}

/** Each counted request's way out of the count, by its response: taken once (countAsWaiting, or its close). */
const counted = new WeakMap<object, () => void>()

/**
 * The request of `response` is no longer work in flight: its response closed (answered, or its
 * client gone). Called from the request's one 'close' listener (request-lifecycle.ts), not from
 * a listener of fair share's own: a listener costs its registration and its removal on every
 * request. A response fair admission did not count (or already let go) is left as it is.
 */
export function endCounted (response: object): void {
  const end = counted.get(response)
  if (end === undefined) return
  counted.delete(response)
  end()
}

/**
 * The request of `reply` now waits for the chain (a held long-poll): from here on it is counted
 * by the waiting quota (wait-quota.ts), no longer as work in flight, so that a client holding
 * long-polls (a dashboard, an office behind one NAT) is not made heavy by them. A request
 * fair admission did not count is left as it is.
 */
export function countAsWaiting (reply: FastifyReply): void {
  endCounted(reply.raw)
}

export class FairAdmission {
  readonly share = new FairShare()
  readonly #shedding: Shedding
  readonly #hold: RefusalHold
  readonly #pace: ExcessPace
  readonly #top: TopClients
  readonly #clock: Clock
  readonly #intervalMs: number
  #stopSamples: (() => void) | undefined
  #sinceLineMs = 0

  constructor (options: FairAdmissionOptions) {
    this.#shedding = options.shedding
    this.#clock = options.clock ?? REAL_CLOCK
    this.#hold = new RefusalHold(RETRY_AFTER_S * 1000, options.holdLimit ?? HOLD_LIMIT, this.#clock)
    this.#pace = new ExcessPace(this.#clock)
    this.#top = new TopClients(options.log)
    this.#intervalMs = options.topClientsIntervalMs ?? TOP_CLIENTS_INTERVAL_MS
  }

  /** Refusals held now. */
  get held (): number {
    return this.#hold.size
  }

  /** Far-over requests let in a second now. */
  get excessPerSecond (): number {
    return this.#pace.perSecond
  }

  /** The load of a new sample of the event loop: the far-over clients' pace follows it. */
  observe (load: LoopLoad): void {
    this.#pace.observe(load !== 'keepingUp')
  }

  /** Starts the share's samples, and the top clients' line once a period. */
  start (): void {
    this.#stopSamples = this.#clock.after(SAMPLE_MS, () => {
      this.share.sample()
      this.#sinceLineMs += SAMPLE_MS
      if (this.#sinceLineMs >= this.#intervalMs) {
        this.#sinceLineMs = 0
        this.#top.flush(this.share.activeClients)
      }
      this.start()
    })
  }

  /** Stops the samples and the line (writing the last period's) and answers every held refusal now. */
  stop (): void {
    this.#stopSamples?.()
    this.#top.flush(this.share.activeClients)
    this.#hold.releaseAll()
  }

  /**
   * Serves a /v1 request (true: counted in until its response ends or it waits (countAsWaiting), its chain reads and
   * verifications queued as its client's) or refuses it. While the replica is `behind` a
   * client over its share is refused at once, as its excess (429, held), so the others never
   * wait behind it, and a client far over its share is refused beyond its pace; what the policy
   * sheds besides is the replica's own overload (503), unless some client is over its share,
   * whose refusals are then the only ones.
   */
  admit (reply: FastifyReply, client: string, done: HookHandlerDoneFunction, load: LoopLoad, policy: { admit (): boolean }): boolean {
    const slots = this.share.slotsOf(client)
    // Counted from before it is judged (a client's first request makes it one of the active)
    // until its answer ends (endCounted, from the lifecycle's 'close' listener), a held
    // refusal's too: a client whose excess waits out its Retry-After is still the heavy one.
    this.share.start(slots)
    counted.set(reply.raw, () => { this.share.end(slots) })
    if ((load === 'behind' && this.share.overShare(slots)) || (this.share.farOverShare(slots) && !this.#pace.take())) {
      this.#refuseExcess(reply, client)
      return false
    }
    if (!policy.admit() && !this.share.uneven) {
      reply.send(this.#shedding.refuse(reply, 'eventLoopDelay'))
      return false
    }
    this.#top.requests.add(client)
    reply.request.readClient = client
    done()
    return true
  }

  /**
   * A full queue refused the request (`overShare`: the queue found its client heavier than the
   * others waiting): 429 held when the client is over its share, 503 (`reason`) otherwise.
   */
  refuseQueued (request: FastifyRequest, reply: FastifyReply, overShare: boolean, reason: ShedReason, message: string): void {
    const client = clientOf(request)
    if (overShare || this.share.overShare(this.share.slotsOf(client))) this.#refuseExcess(reply, client)
    else reply.send(this.#shedding.refuse(reply, reason, message))
  }

  #refuseExcess (reply: FastifyReply, client: string): void {
    this.#top.refusals.add(client)
    this.#hold.hold(reply, this.#shedding.refuseClient(reply, 'fair_share'))
  }
}
