import pLimit, { type LimitFunction } from 'p-limit'
import { Pool, type Dispatcher } from 'undici'
import { ChainBusyError, ChainStatusError, ChainTimeoutError, ChainUnavailableError } from '../errors.js'

export type Query = Readonly<Record<string, string | undefined>>

/** The node's identity and versions: what readiness probes and /v1/versions reports. */
export const NODE_INFO_PATH = '/cosmos/base/tendermint/v1beta1/node_info'

export interface ChainClientOptions {
  /** Base URL of the chain's REST (gRPC-gateway) API, e.g. http://node:1317. */
  readonly baseUrl: string
  /** One chain request's limit, from sending it to the last byte of its body. */
  readonly timeoutMs: number
  /** Chain requests in flight at once; more wait in a bounded queue. */
  readonly concurrency: number
  /** How many may wait beyond `concurrency` before new ones are shed with 503. @default 16 × concurrency */
  readonly queueLimit?: number
  /** Share one upstream request between identical concurrent reads. @default true */
  readonly coalesce?: boolean
  /** Injected for tests; by default a keep-alive Pool to the base URL's origin. */
  readonly dispatcher?: Dispatcher
}

/**
 * Reads JSON from the chain's REST gateway. Bounded (p-limit + a bounded queue), timed out,
 * abortable as a whole at shutdown, and coalescing: concurrent identical reads share one
 * upstream request and one parsed result. Results are shared, so callers must not mutate them.
 */
export class ChainClient {
  readonly #origin: string
  readonly #prefix: string
  readonly #timeoutMs: number
  readonly #queueLimit: number
  readonly #coalesce: boolean
  readonly #dispatcher: Dispatcher
  readonly #limit: LimitFunction
  readonly #pending = new Map<string, Promise<unknown>>()
  readonly #inFlight = new Set<AbortController>()

  constructor (options: ChainClientOptions) {
    const base = new URL(options.baseUrl)
    this.#origin = base.origin
    this.#prefix = base.pathname.replace(/\/+$/, '')
    this.#timeoutMs = options.timeoutMs
    this.#queueLimit = options.queueLimit ?? 16 * options.concurrency
    this.#coalesce = options.coalesce ?? true
    this.#limit = pLimit(options.concurrency)
    // One connection per request the limiter lets through, so undici never queues behind
    // p-limit's back; no pipelining, because one slow chain answer would stall the ones
    // behind it. Idle sockets live 4 s, under the gateway's usual idle timeout.
    this.#dispatcher = options.dispatcher ?? new Pool(this.#origin, {
      connections: options.concurrency,
      pipelining: 1,
      keepAliveTimeout: 4000
    })
  }

  /** GET a gateway path (already percent-encoded, see chainPath) and return its parsed JSON. */
  get (path: string, query: Query = {}): Promise<unknown> {
    const target = this.#prefix + path + queryString(query)
    if (!this.#coalesce) return this.#limited(target)
    const shared = this.#pending.get(target)
    if (shared !== undefined) return shared
    const request = this.#limited(target).finally(() => this.#pending.delete(target))
    this.#pending.set(target, request)
    return request
  }

  /** GET outside the limiter and without coalescing, under its own budget (readiness probes). */
  probe (path: string, timeoutMs: number): Promise<unknown> {
    return this.#fetch(this.#prefix + path, timeoutMs)
  }

  /** Chain requests currently sent and not yet answered. */
  get inFlight (): number {
    return this.#inFlight.size
  }

  /** Aborts every chain request in flight (forced shutdown); their callers get 503. */
  abortAll (): void {
    for (const controller of this.#inFlight) controller.abort(new Error('edge-api is shutting down'))
  }

  async close (): Promise<void> {
    await this.#dispatcher.close()
  }

  #limited (target: string): Promise<unknown> {
    // Counted as admitted work, not p-limit's pendingCount alone: a request that has a free
    // slot still counts as pending for one microtask, so `queueLimit: 0` would shed it.
    const admitted = this.#limit.activeCount + this.#limit.pendingCount
    if (admitted >= this.#limit.concurrency + this.#queueLimit) return Promise.reject(new ChainBusyError())
    return this.#limit(() => this.#fetch(target, this.#timeoutMs))
  }

  async #fetch (target: string, timeoutMs: number): Promise<unknown> {
    const controller = new AbortController()
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      controller.abort(new ChainTimeoutError(timeoutMs))
    }, timeoutMs)
    this.#inFlight.add(controller)
    let answer: unknown
    try {
      const { statusCode, body } = await this.#dispatcher.request({
        origin: this.#origin,
        path: target,
        method: 'GET',
        headers: { accept: 'application/json' },
        signal: controller.signal
      })
      // Always read the body to the end: an unread body holds its socket.
      answer = parseAnswer(statusCode, await body.text(), target)
    } catch (err) {
      if (timedOut) throw new ChainTimeoutError(timeoutMs)
      if (err instanceof ChainStatusError || err instanceof ChainUnavailableError || err instanceof SyntaxError) throw err
      throw new ChainUnavailableError(err)
    } finally {
      clearTimeout(timer)
      this.#inFlight.delete(controller)
    }
    return answer
  }
}

function parseAnswer (statusCode: number, text: string, target: string): unknown {
  if (statusCode >= 200 && statusCode < 300) {
    try {
      return JSON.parse(text)
    } catch {
      throw new SyntaxError(`chain answered ${statusCode} with a body that is not JSON for ${target}`)
    }
  }
  let error: unknown
  try {
    error = JSON.parse(text)
  } catch {}
  if (isGatewayError(error)) throw new ChainStatusError(error.code, error.message)
  // Not the gateway speaking (a proxy's HTML 502, say): the chain is not reachable.
  throw new ChainUnavailableError(`chain answered ${statusCode} without a gateway error body for ${target}`)
}

function isGatewayError (value: unknown): value is { code: number, message: string } {
  const v = value as { code?: unknown, message?: unknown } | null | undefined
  return typeof v?.code === 'number' && typeof v.message === 'string'
}

function queryString (query: Query): string {
  const params = new URLSearchParams()
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined) params.append(key, value)
  }
  const text = params.toString()
  return text === '' ? '' : `?${text}`
}

/**
 * Builds a gateway path, percent-encoding every interpolated value as one path segment,
 * so nothing a client sends can change which path is queried (no "..", "/", "?" or "#").
 */
export function chainPath (strings: TemplateStringsArray, ...values: Array<string | number | bigint>): string {
  let path = strings[0] as string
  values.forEach((value, i) => {
    path += encodeSegment(String(value)) + (strings[i + 1] as string)
  })
  return path
}

function encodeSegment (value: string): string {
  // encodeURIComponent leaves "." alone; "." and ".." segments would still walk the path.
  return encodeURIComponent(value).replace(/\./g, '%2E')
}
