import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'

const CLOSED_LOOP = fileURLToPath(new URL('./closed-loop.mjs', import.meta.url))

/** What the heavy client counted (closed-loop.mjs's one JSON line). */
export interface HeavyTotals {
  readonly byStatus: Record<string, number>
  /** 429s that carried a Retry-After (seconds: the replicas' 1, the router's 10 for its explicit limits). */
  readonly retryAfter: number
  /** Requests that got no answer. */
  readonly errors: number
  readonly perSecond: number
}

export interface HeavyClient {
  readonly child: ChildProcess
  /** Its totals, once it has run its `seconds` and exited. */
  readonly totals: Promise<HeavyTotals>
}

/**
 * A heavy client in a process of its own (closed-loop.mjs), as a scraper runs: `connections`
 * connections from `localAddress` (another loopback address than the other clients'), each
 * sending its next cache-missing read as soon as the last is answered, for `seconds`.
 */
export function startHeavyClient (origin: string, localAddress: string, connections: number, seconds: number): HeavyClient {
  const child = spawn(process.execPath, [CLOSED_LOOP, origin, localAddress, String(connections), String(seconds)], { stdio: ['ignore', 'pipe', 'inherit'] })
  // Listened for at once: the child may be done before its caller asks.
  const exited = once(child, 'exit')
  let out = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => { out += chunk })
  return { child, totals: exited.then(() => JSON.parse(out) as HeavyTotals) }
}
