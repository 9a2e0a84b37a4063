import type { IncomingHttpHeaders } from 'node:http'
import type { FastifySchema } from 'fastify'
import type { ChainClient } from '../chain/client.js'
import { KEEPS_ALIVE, pause } from '../clock.js'
import type { ChainReader, ChainTrace } from '../chain/types.js'
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
 * just confirmed is no height this chain has reached: a 400, not a wait. With gonka's 5–6 s
 * blocks and the default lag of 2, 7 blocks is about 40 s: far more than the few blocks by
 * which two replicas' nodes can honestly disagree, far less than a typo or another chain's height.
 */
export const MIN_HEIGHT_AHEAD_BLOCKS = 5

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
    description: 'The lowest block height the answer may be read at: the X-Block-Height of an earlier answer. Below it this replica waits up to 2 s for its chain nodes, then answers 503 with Retry-After; far above every node\'s head, 400.'
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
export class MinHeights {
  readonly #chain: ChainClient
  readonly #waitMs: number
  readonly #waiters = new Set<Waiter>()
  #polling = false

  constructor (chain: ChainClient, waitMs = MIN_HEIGHT_WAIT_MS) {
    this.#chain = chain
    this.#waitMs = waitMs
  }

  /**
   * A reader pinned at the replica's served height if that is `minimum` or more (ChainClient.latest,
   * asking the nodes if its head is old); else, once a node reaches `minimum`, at its head.
   * Throws 503 (MinHeightUnavailableError) when none does within the wait, 400 when `minimum` is
   * far above every head a poll confirmed.
   */
  async reader (minimum: number, trace: ChainTrace | undefined): Promise<ChainReader> {
    const latest = await this.#chain.latest(trace)
    // Unpinned while no node tells its height (issue 33): `undefined >= minimum` is false, and
    // the read waits for a poll to confirm a head at the minimum; a height nobody can tell
    // cannot be promised (503).
    if ((latest.height as number) >= minimum) return latest
    await this.#reach(minimum)
    const heads = this.#chain.heads
    heads.raiseServed(heads.best)
    return this.#chain.at(heads.served, trace)
  }

  async #reach (minimum: number): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      // The wait is the chain client's (it times the heads' ages too); a read is waiting on it, so it keeps the process alive.
      const cancelTimer = this.#chain.clock.after(this.#waitMs, () => {
        waiter.settle(new MinHeightUnavailableError(minimum, this.#chain.heads.best, this.#waitMs))
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
      const ceiling = best + heads.maxLag + MIN_HEIGHT_AHEAD_BLOCKS
      for (const waiter of this.#waiters) {
        if (best >= waiter.minimum) waiter.settle()
        // Judged only on a head a node has just told: a replica whose nodes are silent says 503, not "your height is wrong".
        else if (confirmed && waiter.minimum > ceiling) {
          waiter.settle(badRequest(`X-Min-Block-Height ${waiter.minimum} is ${waiter.minimum - best} blocks above the highest head of this service's chain nodes (${best}); send the X-Block-Height of an earlier answer`))
        }
      }
      await pause(clock, Math.max(0, MIN_HEIGHT_POLL_SPACING_MS - (clock.now() - started)), KEEPS_ALIVE)
    }
    this.#polling = false
  }
}
