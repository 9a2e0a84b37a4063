import type { ServerResponse } from 'node:http'
import type { GatewayError } from './route.js'

// The network-level faults a simulated node can be told to show (the simulator's latency,
// slow, hang, fail, raw, drop, reset and huge knobs), and the answers of those that replace
// the body: a reset mid-answer, a huge streamed body, a raw non-gateway answer.

export interface Fault {
  readonly prefix: string
  readonly latencyMs?: number
  /** With latencyMs: only every `every`-th request under the prefix is delayed (1 in `every`). */
  readonly every?: number
  readonly hang?: boolean
  readonly error?: GatewayError
  readonly rawStatus?: number
  readonly rawBody?: string
  /** Headers sent with a raw or gateway error answer (Retry-After). */
  readonly headers?: Readonly<Record<string, string>>
  /** Close the connection without answering. */
  readonly drop?: boolean
  /** Send the status line, headers and a part of the body, then reset the connection. */
  readonly reset?: boolean
  /** Answer 200 with this many bytes, streamed (chunked unless declareLength). */
  readonly hugeBytes?: number
  readonly declareLength?: boolean
}

const CHUNK = Buffer.alloc(64 * 1024, 'a')

/** Answers with the first of `faults` that replaces the answer (reset, huge, raw); false when none does. */
export function answerNetworkFault (faults: readonly Fault[], res: ServerResponse): boolean {
  if (faults.some((f) => f.reset === true)) {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' })
    res.write('{"partial":', () => res.socket?.resetAndDestroy())
    return true
  }
  const huge = faults.find((f) => f.hugeBytes !== undefined)
  if (huge !== undefined) {
    streamHuge(res, huge.hugeBytes as number, huge.declareLength === true)
    return true
  }
  const raw = faults.find((f) => f.rawStatus !== undefined)
  if (raw !== undefined) {
    res.writeHead(raw.rawStatus as number, { 'content-type': 'text/html', ...raw.headers }).end(raw.rawBody)
    return true
  }
  return false
}

function streamHuge (res: ServerResponse, bytes: number, declareLength: boolean): void {
  res.writeHead(200, { 'content-type': 'application/json', ...(declareLength ? { 'content-length': String(bytes) } : {}) })
  let left = bytes
  const pump = (): void => {
    while (left > 0 && !res.destroyed) {
      const chunk = left >= CHUNK.length ? CHUNK : CHUNK.subarray(0, left)
      left -= chunk.length
      if (!res.write(chunk)) {
        res.once('drain', pump)
        return
      }
    }
    if (!res.destroyed) res.end()
  }
  pump()
}

export function json (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body)
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(text)
}
