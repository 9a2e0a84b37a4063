import { Pool } from 'undici'
import { NamedError } from '../named-error.js'
import type { NodeRpc } from '../light/light-reader.js'
import type { Deadline, Deadlines } from './deadline.js'

// Each node's CometBFT RPC endpoint (EDGE_API_CHAIN_RPC_URL, docs/verified-reads.md): where
// the verified-height cursor reads signed headers (/commit: at the node's head, with the
// commit the node has seen, which no block carries yet) and validator sets (/validators).
// JSON-RPC over HTTP GET, as CometBFT's URI handler serves it: the answer is
// {"jsonrpc":"2.0","id":-1,"result":…}, or {…,"error":{code,message,data}} with status 500.
// Only the cursor reads it, outside the read limiter like the head poll; what it answers says
// nothing of the node's gateway, which keeps serving reads while its RPC is away.

/** An RPC answer that is not a JSON-RPC result: the error it names, or what it is instead. */
export class RpcAnswerError extends NamedError {}

interface Endpoint {
  readonly url: string
  readonly origin: string
  /** The base URL's path (no trailing slash), prepended to every RPC path. */
  readonly prefix: string
  readonly pool: Pool
}

/**
 * The cursor's reads at once from one endpoint: a header and the two sets it names, or a
 * bisection's. One node is followed at a time (cursor.ts), so a few connections are plenty.
 */
const CONNECTIONS = 4

export class RpcEndpoints {
  readonly #endpoints: ReadonlyArray<Endpoint | undefined>

  /** `urls`: each node's RPC base URL, by the nodes' order (undefined: that node has none); answers beyond `maxResponseBytes` are cut off. */
  constructor (urls: ReadonlyArray<string | undefined>, maxResponseBytes: number) {
    this.#endpoints = urls.map((url) => {
      if (url === undefined) return undefined
      const base = new URL(url)
      return { url, origin: base.origin, prefix: base.pathname.replace(/\/+$/, ''), pool: new Pool(base.origin, { connections: CONNECTIONS, pipelining: 1, keepAliveTimeout: 4000, maxResponseSize: maxResponseBytes }) }
    })
  }

  /** The endpoints of `urls` (EDGE_API_CHAIN_RPC_URL's), or undefined when none is set. */
  static create (urls: ReadonlyArray<string | undefined> | undefined, maxResponseBytes: number): RpcEndpoints | undefined {
    return urls === undefined ? undefined : new RpcEndpoints(urls, maxResponseBytes)
  }

  /** The cursor's reads (light-reader.ts), each under its own `timeoutMs` among `deadlines` (abortAll reaches them). */
  reads (deadlines: Deadlines, timeoutMs: number): NodeRpc {
    return { has: (node) => this.has(node), get: async (node, path) => deadlines.run(timeoutMs, async (deadline) => this.get(node, path, deadline)) }
  }

  /** Whether node `node` has an RPC endpoint. */
  has (node: number): boolean {
    return this.#endpoints[node] !== undefined
  }

  /** GETs `path` (its query included) from node `node`'s endpoint under `deadline`: the JSON-RPC result; rejects with the error it names, or when unanswered. */
  async get (node: number, path: string, deadline: Deadline): Promise<unknown> {
    const endpoint = this.#endpoints[node]
    if (endpoint === undefined) throw new RangeError(`chain node ${node} has no RPC endpoint`)
    const where = `${endpoint.url}${path}`
    const answer = await endpoint.pool.request({ origin: endpoint.origin, path: endpoint.prefix + path, method: 'GET', signal: deadline.signal })
    const text = await answer.body.text()
    let body: { result?: unknown, error?: { message?: unknown, data?: unknown } }
    try {
      body = JSON.parse(text)
    } catch {
      throw new RpcAnswerError(`${where} answered ${answer.statusCode} with a body that is not JSON`)
    }
    if (typeof body?.error === 'object' && body.error !== null) {
      throw new RpcAnswerError(`${where} answered the error ${JSON.stringify(body.error.message)}: ${JSON.stringify(body.error.data)}`)
    }
    if (answer.statusCode !== 200 || body?.result === undefined || body.result === null) {
      throw new RpcAnswerError(`${where} answered ${answer.statusCode} without a JSON-RPC result`)
    }
    return body.result
  }

  async close (): Promise<void> {
    await Promise.all(this.#endpoints.map(async (endpoint) => await endpoint?.pool.close()))
  }
}
