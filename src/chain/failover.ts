import type { Deadline } from './deadline.js'
import type { ExchangeRequest, NodeExchange } from './exchange.js'
import type { ChainHeads } from './heights.js'
import type { ChainNode, ChainNodes } from './nodes.js'
import type { Outcome, ReadRequest } from './types.js'

// The choice of node for one read, and its failover: the preferred node, then at once the
// next one while a node fails to connect, drops the connection or cannot serve the height.

export interface NodeChoiceOptions {
  readonly nodes: ChainNodes
  readonly heads: ChainHeads
  readonly exchange: NodeExchange
}

/** Chooses the nodes of each read: begin() a read, then ask its nodes one by one (failover) or two at once (hedged-read.ts). */
export class NodeChoice {
  readonly #nodes: ChainNodes
  readonly #heads: ChainHeads
  readonly #exchange: NodeExchange

  constructor (options: NodeChoiceOptions) {
    this.#nodes = options.nodes
    this.#heads = options.heads
    this.#exchange = options.exchange
  }

  /**
   * A read under `deadline`. A latest-state read (pinned, or at the node's latest) skips
   * lagging nodes; a pinned one tries first the nodes known to have its height.
   */
  begin (request: ReadRequest, deadline: Deadline): NodeRead {
    const { height } = request
    const heads = this.#heads
    const tried = height === undefined && request.latest !== true ? [] : this.#nodes.all.filter((n) => heads.lagging(n.index))
    const suits = height === undefined ? undefined : (n: ChainNode) => heads.head(n.index) >= height
    return new NodeRead(this.#nodes, this.#exchange, request, deadline, new Set(tried), suits)
  }

  /** A read's attempts one after the other: the next node only when one fails to answer. */
  async failover (read: NodeRead): Promise<Outcome> {
    let node: ChainNode | undefined = read.first
    let result: Outcome
    do {
      result = await read.ask(node)
      node = result.ok || !result.tryNext ? undefined : read.next()
    } while (node !== undefined)
    return result
  }
}

/** One read's state across its attempts: the nodes it tried, which nodes suit it, its attempts so far. */
export class NodeRead {
  readonly request: ReadRequest
  readonly deadline: Deadline
  /** The node asked first. Never undefined: the node with the best head is never lagging. */
  readonly first: ChainNode
  readonly #nodes: ChainNodes
  readonly #exchange: NodeExchange
  readonly #tried: Set<ChainNode>
  readonly #suits: ((node: ChainNode) => boolean) | undefined
  #attempts = 0

  constructor (nodes: ChainNodes, exchange: NodeExchange, request: ReadRequest, deadline: Deadline, tried: Set<ChainNode>, suits: ((node: ChainNode) => boolean) | undefined) {
    this.#nodes = nodes
    this.#exchange = exchange
    this.request = request
    this.deadline = deadline
    this.#tried = tried
    this.#suits = suits
    this.first = nodes.pick(tried, suits) as ChainNode
  }

  /** The node to ask next, none tried already (ChainNodes.pick); undefined once every node was. */
  next (): ChainNode | undefined {
    return this.#nodes.pick(this.#tried, this.#suits)
  }

  /** Asks `node` (counted as tried and in flight meanwhile); `signal` and `hedge` as ExchangeRequest's. */
  async ask (node: ChainNode, options: Pick<ExchangeRequest, 'signal' | 'hedge'> = {}): Promise<Outcome> {
    this.#tried.add(node)
    node.inFlight++
    try {
      return await this.#exchange.send(node, {
        path: this.request.target,
        deadline: this.deadline,
        attempt: ++this.#attempts,
        trace: this.request.trace,
        height: this.request.height,
        ...options
      })
    } finally {
      node.inFlight--
    }
  }
}
