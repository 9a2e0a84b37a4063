import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import { heldTagHeight } from '../cache/conditional.js'
import { answerTag, matchesTag } from '../cache/http-cache.js'
import { clientOf } from '../admission/client-identity.js'
import { countAsWaiting } from '../admission/fair-admission.js'
import { untimed } from '../metrics/requests.js'
import { routeClass } from '../cache/route-classes.js'
import type { ChainHeads } from '../chain/heights.js'
import type { Clock } from '../clock.js'
import { badRequest } from '../errors.js'
import type { HeadFollower } from './head-follower.js'
import { overCap, type WaitQuota } from './wait-quota.js'
import { Waiters, type WakeReason } from './waiters.js'

// Long-poll on the latest-state routes (docs/waiting.md): `?afterHeight=H&wait=S` answers once
// the answer's height is above H, `If-None-Match` with `Prefer: wait=S` (RFC 7240) once the
// answer's ETag changes (a tag names its height: a new block is a new tag), else the current
// answer (or 304) when S has passed. The wait sits in a preHandler of its own, after the
// route's own input checks and before the pin (src/cache/http-cache.ts): the answer is then
// built as any other, at the new head, by one chain read per route per block with the cache.

/** Seconds a long-poll waits when it names no wait, and the most it may name (under the router's timeouts). */
export const DEFAULT_WAIT_S = 25
export const MAX_WAIT_S = 30
/** The server adds up to wait/JITTER_DIVISOR to each wait, so waits that began together end apart (Consul's wait/16). */
export const JITTER_DIVISOR = 16

const WAIT_RULE = `wait must be whole seconds from 0 to ${MAX_WAIT_S} (default ${DEFAULT_WAIT_S})`
const HEIGHT_RULE = 'afterHeight must be a block height: a whole number from 0 to 999999999999999'

/** What a long-poll asks: the height it has seen (afterHeight, or its tag's), how long it may wait, and in which form. */
interface WaitAsk {
  readonly afterHeight: number | undefined
  readonly waitS: number
  /** Asked with Prefer: wait (answered with Preference-Applied). */
  readonly preferred: boolean
}

export interface LongPollOptions {
  readonly heads: ChainHeads
  readonly follower: HeadFollower
  readonly clock: Clock
  /** The caps of held requests, shared with the event streams (app.ts). */
  readonly quota: WaitQuota
  /** Held requests changed (the metrics' gauge). */
  readonly onHeld?: ((held: number) => void) | undefined
  /** A held request was released after `seconds`, and why (the metrics' histogram). */
  readonly onReleased?: ((reason: WakeReason, seconds: number) => void) | undefined
  /** The jitter's draw, 0–1. @default Math.random */
  readonly random?: () => number
  /** The verified height V (the cursor), which a proven route's answers are read at (src/proven/proven-answers.ts). @default none */
  readonly verified?: { readonly height: number | undefined, settled: () => Promise<void> } | undefined
}

/**
 * The client a cap counts a request against: who it is from (client-identity.ts: behind trusted
 * proxies, the first untrusted hop). Taken before any await, and the same key given back as
 * taken: once the socket is gone, Node reports no address.
 */
export function waitingClient (request: FastifyRequest): string {
  return clientOf(request)
}

/**
 * Calls `onGone` once the client of `reply` has left (the response's 'close'; at once when it
 * already has, whose 'close' has then been emitted). Attached before a held request's first
 * await, so its client may leave at any moment. Returns the function that stops listening.
 */
export function whenGone (reply: FastifyReply, onGone: () => void): () => void {
  const res = reply.raw
  if (res.destroyed) {
    onGone()
    return () => {}
  }
  res.once('close', onGone)
  return () => { res.off('close', onGone) }
}

/**
 * Adds the long-poll step to every latest-state route added after it in `app`'s scope, and
 * wakes every held request when the app closes (the drain's listener close): each is then
 * answered at once with its current answer (and Connection: close, app.ts).
 */
export function longPoll (app: FastifyInstance, options: LongPollOptions): Waiters {
  const poll = new LongPoll(options)
  const unsubscribe = options.heads.onHead((head) => poll.waiters.wakeBelow(head))
  app.addHook('preClose', async () => { poll.close() })
  app.addHook('onClose', async () => unsubscribe())
  app.addHook('onRoute', (route) => {
    const methods = [route.method].flat()
    if (!methods.every((method) => routeClass(method === 'HEAD' ? 'GET' : method, route.url) === 'latest')) return
    route.preHandler = [...[route.preHandler ?? []].flat(), poll.heldUntilChanged(route.url, route.config?.atVerifiedHeight === true)]
  })
  return poll.waiters
}

/** The held requests of one app: the preHandler that holds them, their caps, and their release. */
class LongPoll {
  readonly waiters: Waiters
  readonly #options: LongPollOptions
  readonly #quota: WaitQuota
  readonly #random: () => number
  #closing = false

  constructor (options: LongPollOptions) {
    this.#options = options
    this.waiters = new Waiters(options.clock)
    this.#quota = options.quota
    this.#random = options.random ?? Math.random
  }

  /** The app closes (the drain's listener close): every held request is answered now, and none is held again. */
  close (): void {
    this.#closing = true
    this.waiters.wakeAll()
  }

  heldUntilChanged (route: string, atVerifiedHeight: boolean) {
    // A callback hook: a read that asks no wait (nearly all) goes on in this call, no promise.
    return (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void => {
      const ask = waitAsked(request)
      if (ask === undefined) return done()
      // Answered here (a 499, a 304): the chain ends, the route's handler never runs.
      this.#waited(request, reply, route, ask, atVerifiedHeight).then((answered) => { if (answered === undefined) done() }, done)
    }
  }

  /** A long-poll's wait: the reply when it answered (a 499, a 304), undefined to go on to the answer. */
  async #waited (request: FastifyRequest, reply: FastifyReply, route: string, ask: WaitAsk, atVerifiedHeight: boolean): Promise<FastifyReply | undefined> {
    const { heads } = this.#options
    // Before the first await: whose place it takes, and whether its client leaves meanwhile.
    const client = waitingClient(request)
    let gone = false
    const stopWatching = whenGone(reply, () => { gone = true })
    if (ask.preferred) reply.header('preference-applied', `wait=${ask.waitS}`)
    const head = await heads.latest() ?? heads.served
    stopWatching()
    // A client that left gets no answer built for it (499: nginx's "client closed request").
    if (gone) return reply.code(499).send()
    // A proven route answers at V, `behind` blocks below the head: its wait is for V to pass what was seen.
    const verified = atVerifiedHeight ? this.#options.verified?.height : undefined
    const [height, behind] = verified === undefined ? [head, 0] : [verified, Math.max(0, head - verified)]
    const seen = ask.afterHeight ?? seenByTag(request, route, height)
    if (seen === undefined || seen < Math.max(height, heads.best - behind) || ask.waitS === 0 || this.#closing) return undefined
    const refused = this.#quota.take(client)
    if (refused !== undefined) throw overCap(refused)
    countAsWaiting(reply)
    const reason = await this.#held(reply, seen + behind, ask.waitS * 1000 * (1 + this.#random() / JITTER_DIVISOR))
    this.#quota.give(client)
    if (reason === 'gone') return reply.code(499).send()
    // Woken by a head that lets V pass what was seen (a poll's or a read's): answered once the
    // cursor has followed the nodes' blocks, so at the new V (one poll round, joined by every
    // request woken with it).
    if (verified !== undefined) await this.#followed()
    // Its tag names a block this replica has still not passed: what it holds is newer than any answer here.
    if (ask.afterHeight === undefined && seen > height && heads.best <= seen) return reply.code(304).send()
    return undefined
  }

  async #followed (): Promise<void> {
    await this.#options.heads.poll()
    await this.#options.verified?.settled()
  }

  /** Holds the request until woken; released however it ends (the response's 'close' is its client gone). */
  async #held (reply: FastifyReply, seen: number, waitMs: number): Promise<WakeReason> {
    const { clock } = this.#options
    const heldAt = clock.now()
    untimed(reply)
    const unfollow = this.#options.follower.follow()
    // Set in the promise's executor, which runs at once.
    let stopWatching!: () => void
    const reason = await new Promise<WakeReason>((resolve) => {
      const release = this.waiters.hold(seen, waitMs, resolve)
      this.#options.onHeld?.(this.waiters.size)
      // Synchronous from the check above: its client is still here, or leaves from now on.
      stopWatching = whenGone(reply, release)
    })
    stopWatching()
    unfollow()
    this.#options.onHeld?.(this.waiters.size)
    this.#options.onReleased?.(reason, (clock.now() - heldAt) / 1000)
    return reason
  }
}

/**
 * The height a conditional long-poll has seen: this replica's when its tag is the current
 * answer's; the tag's own when it names a block above this replica's (its client read it from
 * a replica ahead: it waits for a block above that, not for this replica's older answer);
 * undefined otherwise (the answer changed: at once).
 */
function seenByTag (request: FastifyRequest, route: string, height: number): number | undefined {
  const header = request.headers['if-none-match']
  if (matchesTag(header, answerTag(request, route, height))) return height
  const held = heldTagHeight(header)
  return held !== undefined && held > height ? held : undefined
}

/** The long-poll a request asks for, if any; a 400 naming what is allowed for a bad one. */
export function waitAsked (request: FastifyRequest): WaitAsk | undefined {
  const query = request.query as Record<string, unknown> | undefined
  const afterHeight = query?.afterHeight
  const wait = query?.wait
  const prefer = preferredWait(request.headers.prefer)
  const conditional = request.headers['if-none-match'] !== undefined
  if (afterHeight === undefined && !(conditional && (prefer !== undefined || wait !== undefined))) {
    if (wait !== undefined) throw badRequest('wait needs afterHeight=<height> (or If-None-Match with the answer\'s ETag)')
    return undefined
  }
  if (afterHeight !== undefined && (typeof afterHeight !== 'string' || !/^\d{1,15}$/.test(afterHeight))) throw badRequest(HEIGHT_RULE)
  if (wait !== undefined && (typeof wait !== 'string' || !/^\d{1,2}$/.test(wait) || Number(wait) > MAX_WAIT_S)) throw badRequest(WAIT_RULE)
  const waitS = wait !== undefined ? Number(wait) : prefer ?? DEFAULT_WAIT_S
  return { afterHeight: afterHeight === undefined ? undefined : Number(afterHeight), waitS, preferred: wait === undefined && prefer !== undefined }
}

/**
 * Prefer's wait (RFC 7240 §4.3), at most MAX_WAIT_S (a longer one is shortened, as the RFC lets
 * a server, and Preference-Applied says so); undefined without one; a 400 for one that is no
 * number of seconds.
 */
function preferredWait (header: string | string[] | undefined): number | undefined {
  if (header === undefined) return undefined
  // Several Prefer headers are one list (RFC 9110 §5.3).
  const match = /(?:^|[,;])\s*wait\s*=\s*("?)([^",;\s]*)\1\s*(?=[,;]|$)/i.exec([header].flat().join(','))
  if (match === null) return undefined
  const value = match[2] as string
  if (!/^\d{1,9}$/.test(value)) throw badRequest(`Prefer: ${WAIT_RULE}`)
  return Math.min(Number(value), MAX_WAIT_S)
}
