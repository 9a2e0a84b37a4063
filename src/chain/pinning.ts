import type { ChainHeads } from './heights.js'
import type { ChainNodes } from './nodes.js'
import { withQuery } from './paths.js'
import type { Answer, ChainReader, ChainTrace, Query, ReadContext, ReadRequest } from './types.js'

// Heights and pinning (docs/heights-and-cache.md): the readers whose reads are pinned to one
// height, the latest-state read that is never served below a height served before, and the
// head poll that tells each node's head. heights.ts keeps the heads; this file reads by them.

/**
 * The head poll's own budget per node, never the chain timeout: a read waits for two rounds of
 * it at most before it goes unpinned (issue 33), 1 s, where a healthy node answers its latest
 * block in milliseconds.
 */
export const HEAD_POLL_TIMEOUT_MS = 500

export interface PinningOptions {
  readonly heads: ChainHeads
  /** A read through the chain client's front (limiter, coalescing, choice of node). */
  readonly answer: (request: ReadRequest) => Promise<Answer>
}

/** The pinned readers of one chain client. */
export class Pinning {
  readonly #heads: ChainHeads
  readonly #answer: (request: ReadRequest) => Promise<Answer>

  constructor (options: PinningOptions) {
    this.#heads = options.heads
    this.#answer = options.answer
  }

  /** A reader whose every read is pinned to `height` (and its reads `context`'s). */
  at (height: number, context: ReadContext): ChainReader {
    return { height, get: async (path, query = {}) => this.#get(path, query, height, context) }
  }

  /**
   * A reader pinned to the height latest-state answers are served at now, asking the nodes if
   * need be (ChainHeads.latest; a poll it starts is traced as `context`'s). No head confirmed (no node
   * tells its height, the head poll fails or hangs): pinned to the height its first read is
   * answered at if the node tells it, else unpinned, as the Go service read (issue 33).
   */
  async latest (context: ReadContext): Promise<ChainReader> {
    const height = await this.#heads.latest(context.trace)
    return height === undefined ? this.firstAnswer(context) : this.at(height, context)
  }

  /** A reader pinned to the height its first read is answered at (FirstAnswerPin). */
  firstAnswer (context: ReadContext): ChainReader {
    return new FirstAnswerPin(this, context)
  }

  /**
   * A latest-state read at the node's own latest height, from a node that is not lagging;
   * with the height it was answered at, read again at the served height if the node was
   * behind it, or told a height no node's head is (ChainHeads.raiseServed).
   */
  async readLatest (path: string, query: Query, context: ReadContext): Promise<Answer> {
    const answer = await this.#answer({ target: withQuery(path, query), latest: true, hedged: true, trace: context.trace, client: context.client })
    if (answer.height === undefined) return answer
    this.#heads.raiseServed(answer.height)
    const served = this.#heads.served
    // Nothing served yet and the answer's height not counted (one implausible answer): as it is.
    if (served === answer.height || served === 0) return answer
    return { value: await this.#get(path, query, served, context), height: served }
  }

  async #get (path: string, query: Query, height: number, context: ReadContext): Promise<unknown> {
    return (await this.#answer({ target: withQuery(path, query), height, hedged: true, trace: context.trace, client: context.client })).value
  }
}

/**
 * Pins an answer's reads to the height its first read is answered at: the first goes to a
 * node at its latest height, and every later one (waiting for the first) at that height.
 */
class FirstAnswerPin implements ChainReader {
  readonly #pinning: Pinning
  readonly #context: ReadContext
  #height: number | undefined
  #first: Promise<unknown> | undefined

  constructor (pinning: Pinning, context: ReadContext) {
    this.#pinning = pinning
    this.#context = context
  }

  get height (): number | undefined {
    return this.#height
  }

  async get (path: string, query: Query = {}): Promise<unknown> {
    if (this.#height !== undefined) return this.#pinning.at(this.#height, this.#context).get(path, query)
    if (this.#first !== undefined) {
      await this.#first.catch(() => {})
      return this.get(path, query)
    }
    const first = this.#pinning.readLatest(path, query, this.#context)
    this.#first = first
    try {
      const answer = await first
      // A node that does not tell its height leaves the answer unpinned, as before heights.
      this.#height = answer.height
      return answer.value
    } finally {
      if (this.#height === undefined) this.#first = undefined
    }
  }
}

export interface HeadPollOptions {
  readonly nodes: ChainNodes
  readonly heads: ChainHeads
  /** GETs LATEST_BLOCK_PATH from one node as the head poll, outside the limiter, under the poll's own budget (ChainClient). */
  readonly ask: (node: number, trace: ChainTrace | undefined) => Promise<unknown>
  /** Told each node's answer (its latest block) as it comes: the verified-height cursor follows it. */
  readonly told?: ((node: number, answer: unknown) => void) | undefined
}

interface LatestBlock { block?: { header?: { height?: unknown } | null } | null }

/**
 * Asks every node taking reads (every node, when none is: not down, not rate-limited) for its
 * latest block, each height told reported to the heads.
 */
export async function pollHeads (options: HeadPollOptions, trace: ChainTrace | undefined): Promise<void> {
  const { nodes, heads } = options
  const taking = nodes.all.filter((node) => nodes.takesReads(node))
  const asked = taking.length > 0 ? taking : nodes.all
  await Promise.all(asked.map(async (node) => {
    try {
      const answer = await options.ask(node.index, trace) as LatestBlock | null
      const height = Number(answer?.block?.header?.height)
      // An answer without a height confirms nothing.
      if (Number.isSafeInteger(height) && height >= 1) heads.observe(node.index, height, 'poll')
      options.told?.(node.index, answer)
    } catch {
      // Down, or not answering: the probe has already reported it to the node set.
    }
  }))
}
