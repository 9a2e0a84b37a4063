import type { IncomingHttpHeaders } from 'node:http'
import type { FastifySchema } from 'fastify'
import type { ChainClient } from '../chain/client.js'
import { KEEPS_ALIVE, pause } from '../clock.js'
import type { ChainReader, ReadContext } from '../chain/types.js'
import { badRequest, MinHeightUnavailableError } from '../errors.js'
import { routeClass } from './route-classes.js'

// The client-echoed minimum height (docs/heights-and-cache.md §7): a client that sends back
// the X-Block-Height it last received never gets an older answer, whichever replica, router
// or reconnect its next request takes. The session-token pattern of Cosmos DB, MongoDB's
// afterClusterTime and EIP-1898, kept per request: nothing of it is stored, so one client's
// value can never hold back or push forward what other clients are served (eRPC#924, Lava#2323).

/** The request header naming the lowest block height a latest-state answer may be read at. */
export const MIN_HEIGHT_HEADER = 'x-min-block-height'

/** The longest a read waits for this replica's nodes to reach the minimum before its 503. */
export const MIN_HEIGHT_WAIT_MS = 2000

/** While reads wait, the nodes are asked for their heads at most once per this (one poll shared by every waiting read). */
export const MIN_HEIGHT_POLL_SPACING_MS = 100

/**
 * A minimum more than EDGE_API_MAX_NODE_LAG plus this many blocks above the best head a poll
 * just confirmed is beyond this replica's ceiling: its nodes are plausibly behind (catching up
 * after a restart, another pool ahead), so the read answers 503 with Retry-After at once, for
 * the client to try another replica, instead of waiting. With gonka's 5–6 s blocks and the
 * default lag of 2, 7 blocks is about 40 s: more than two replicas' nodes honestly disagree by.
 */
export const MIN_HEIGHT_AHEAD_BLOCKS = 5

/**
 * A minimum more than this many times the ceiling is no height of this chain (a typo, another
 * network's height): a 400, which no retry can cure. Far enough that no replica behind is ever
 * told so: a replica 10× behind the chain is not catching up, it is on another network.
 */
export const MIN_HEIGHT_ABSURD_FACTOR = 10

/**
 * The most reads that wait for a minimum at once on one replica. Each holds its connection
 * (behind HAProxy, a `maxconn` slot) for up to MIN_HEIGHT_WAIT_MS without costing the event
 * loop, so load shedding never sees them; beyond the cap a read answers 503 with Retry-After
 * at once. 256 two-second waits are far more than the clients of one replica echo a height
 * it has not reached during a block (a few, for the block in flight), and a small share of a
 * router's connections.
 */
export const MIN_HEIGHT_MAX_WAITERS = 256

// A positive integer of at most 16 digits, as answeredHeight reads the node's own header.
const HEIGHT = /^[1-9]\d{0,15}$/

/**
 * The minimum height a request asks for; undefined when it sends none. Throws a 400 for a value
 * that is not one block height (not a positive integer, over 16 digits or 2^53, several values):
 * checked before anything asks the chain.
 */
export function minimumHeight (headers: IncomingHttpHeaders): number | undefined {
  const value = headers[MIN_HEIGHT_HEADER]
  if (value === undefined) return undefined
  // Node joins a repeated header with ", ".
  const text = String(value)
  if (text.includes(',')) throw badRequest('X-Min-Block-Height must be sent once, with one block height')
  const height = Number(text)
  if (!HEIGHT.test(text) || !Number.isSafeInteger(height)) {
    throw badRequest('X-Min-Block-Height must be a block height: a positive integer of at most 16 digits, below 2^53 (the X-Block-Height of an earlier answer)')
  }
  return height
}

/**
 * @fastify/swagger's transform: the latest-state routes' operations document the header (in
 * /openapi.json only: the schema Fastify validates with is unchanged, minimumHeight checks it).
 */
export function documentMinHeight ({ schema, url, route }: { schema: FastifySchema, url: string, route: { method: string | string[] } }): { schema: FastifySchema, url: string } {
  if (routeClass([route.method].flat()[0] as string, url) !== 'latest') return { schema, url }
  const header = {
    type: 'string',
    pattern: HEIGHT.source,
    description: 'The lowest block height the answer may be read at: the X-Block-Height of an earlier answer. Below it this replica waits up to 2 s for its chain nodes, then answers 503 with Retry-After (at once when this replica is far behind it, or too many reads wait); 400 only for a height no replica can be behind by.'
  }
  return { schema: { ...schema, headers: { type: 'object', properties: { [MIN_HEIGHT_HEADER]: header } } }, url }
}

interface Waiter {
  readonly minimum: number
  settle (error?: Error): void
}

/**
 * Latest-state readers at a client's minimum height or later. A read whose replica's head is
 * below the minimum waits, at most MIN_HEIGHT_WAIT_MS, for a node to reach it: the waiting
 * reads share one loop that asks the nodes for their heads (ChainHeads.poll) at most once per
 * MIN_HEIGHT_POLL_SPACING_MS, so a burst of them costs the chain no more than one does.
 */
export interface MinHeightsOptions {
  /** @default MIN_HEIGHT_WAIT_MS */
  readonly waitMs?: number
  /** @default MIN_HEIGHT_MAX_WAITERS */
  readonly maxWaiters?: number
}

export class MinHeights {
  readonly #chain: ChainClient
  readonly #waitMs: number
  readonly #maxWaiters: number
  readonly #waiters = new Set<Waiter>()
  #polling = false

  constructor (chain: ChainClient, options: MinHeightsOptions = {}) {
    this.#chain = chain
    this.#waitMs = options.waitMs ?? MIN_HEIGHT_WAIT_MS
    this.#maxWaiters = options.maxWaiters ?? MIN_HEIGHT_MAX_WAITERS
  }

  /**
   * A reader pinned at the replica's served height if that is `minimum` or more (ChainClient.latest,
   * asking the nodes if its head is old); else, once a node reaches `minimum`, at its head.
   * Throws 503 (MinHeightUnavailableError) when none does within the wait, when `minimum` is
   * beyond this replica's ceiling (it is behind), or when MIN_HEIGHT_MAX_WAITERS reads wait
   * already; 400 only when `minimum` is absurd (MIN_HEIGHT_ABSURD_FACTOR times the ceiling).
   */
  async reader (minimum: number, context: ReadContext): Promise<ChainReader> {
    const latest = await this.#chain.latest(context)
    // Unpinned while no node tells its height (issue 33): `undefined >= minimum` is false, and
    // the read waits for a poll to confirm a head at the minimum; a height nobody can tell
    // cannot be promised (503).
    if ((latest.height as number) >= minimum) return latest
    await this.#reach(minimum)
    const heads = this.#chain.heads
    heads.raiseServed(heads.best)
    return this.#chain.at(heads.served, context)
  }

  async #reach (minimum: number): Promise<void> {
    if (this.#waiters.size >= this.#maxWaiters) {
      throw new MinHeightUnavailableError(minimum, this.#chain.heads.best, `and ${this.#waiters.size} reads wait for their minimum already`)
    }
    await new Promise<void>((resolve, reject) => {
      // The wait is the chain client's (it times the heads' ages too); a read is waiting on it, so it keeps the process alive.
      const cancelTimer = this.#chain.clock.after(this.#waitMs, () => {
        waiter.settle(new MinHeightUnavailableError(minimum, this.#chain.heads.best, `within ${this.#waitMs} ms`))
      }, KEEPS_ALIVE)
      const waiter: Waiter = {
        minimum,
        settle: (error) => {
          cancelTimer()
          this.#waiters.delete(waiter)
          if (error === undefined) resolve()
          else reject(error)
        }
      }
      this.#waiters.add(waiter)
      // Never rejects: a poll that fails tells no head (ChainHeads.poll).
      if (!this.#polling) this.#poll().catch(() => {})
    })
  }

  // The polls serve every waiting read, none in particular: untraced, as the background poll is.
  async #poll (): Promise<void> {
    this.#polling = true
    const { heads, clock } = this.#chain
    while (this.#waiters.size > 0) {
      const started = clock.now()
      const confirmed = await heads.poll()
      const best = heads.best
      for (const waiter of this.#waiters) {
        if (best >= waiter.minimum) waiter.settle()
        // Judged only on a head a node has just told: a replica whose nodes are silent says 503, not "your height is wrong".
        else if (confirmed) judgeAhead(waiter, best, best + heads.maxLag + MIN_HEIGHT_AHEAD_BLOCKS)
      }
      await pause(clock, Math.max(0, MIN_HEIGHT_POLL_SPACING_MS - (clock.now() - started)), KEEPS_ALIVE)
    }
    this.#polling = false
  }
}

/** Ends the wait of a read whose minimum is beyond the ceiling: 400 when absurd, else 503 at once. */
function judgeAhead (waiter: Waiter, best: number, ceiling: number): void {
  const ahead = waiter.minimum - best
  if (waiter.minimum > ceiling * MIN_HEIGHT_ABSURD_FACTOR) {
    waiter.settle(badRequest(`X-Min-Block-Height ${waiter.minimum} is ${ahead} blocks above the highest head of this service's chain nodes (${best}), more than any replica can be behind; send the X-Block-Height of an earlier answer`))
  } else if (waiter.minimum > ceiling) {
    waiter.settle(new MinHeightUnavailableError(waiter.minimum, best, `and it is ${ahead} blocks behind it, more than its nodes catch up on within the wait`))
  }
}
