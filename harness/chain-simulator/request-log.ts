import type { IncomingMessage } from 'node:http'

// What a simulated node saw: every request in arrival order, with the height it asked for
// and was answered at, its client port and trace headers, and the requests their clients
// gave up on. The simulator (simulator.ts) records each request as it arrives; tests read it.

export class RequestLog {
  readonly #counts = new Map<string, number>()
  /** Every request's path and query, in arrival order. */
  readonly requests: string[] = []
  /** The x-cosmos-block-height each request asked for (undefined: none), in arrival order. */
  readonly askedHeights: Array<number | undefined> = []
  /** The height each request was answered at (undefined: an error), in arrival order. */
  readonly answeredHeights: Array<number | undefined> = []
  /** The client port each request arrived from, in arrival order: the same port twice is a reused connection. */
  readonly clientPorts: number[] = []
  /** Each request's traceparent header (W3C trace context) or undefined, in arrival order. */
  readonly traceparents: Array<string | undefined> = []
  /** Each request's tracestate header or undefined, in arrival order. */
  readonly tracestates: Array<string | undefined> = []
  /** The path and query of each request the client gave up on (closed) before its answer was sent, in order. */
  readonly aborted: string[] = []

  /** How many requests arrived whose pathname starts with `prefix` (all when omitted). */
  count (prefix = '/'): number {
    let n = 0
    for (const [path, c] of this.#counts) if (path.startsWith(prefix)) n += c
    return n
  }

  resetCounts (): void {
    this.#counts.clear()
    this.requests.length = 0
    this.askedHeights.length = 0
    this.answeredHeights.length = 0
    this.clientPorts.length = 0
    this.traceparents.length = 0
    this.tracestates.length = 0
    this.aborted.length = 0
  }

  /** Records a request for `pathAndQuery` that asked for height `asked`; returns its index in answeredHeights. */
  protected record (req: IncomingMessage, pathAndQuery: string, asked: number | undefined): number {
    const pathname = pathAndQuery.split('?')[0] as string
    this.#counts.set(pathname, (this.#counts.get(pathname) ?? 0) + 1)
    this.requests.push(pathAndQuery)
    this.askedHeights.push(asked)
    this.clientPorts.push(req.socket.remotePort as number)
    this.traceparents.push(req.headers.traceparent as string | undefined)
    this.tracestates.push(req.headers.tracestate as string | undefined)
    return this.answeredHeights.push(undefined) - 1
  }
}
