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
  /** Connections that failed, by error code (a failure to connect is one too). */
  readonly failures: Record<string, number>
  readonly perSecond: number
  /** Milliseconds from its start until every connection had had an answer. */
  readonly readyMs: number
}

export interface HeavyClient {
  /** The loopback address it sends from. */
  readonly address: string
  readonly child: ChildProcess
  /** Once every connection has had an answer or been turned away (its connection storm over): it then runs its `seconds`. */
  readonly ready: Promise<void>
  /** Its totals over its `seconds` from ready, once it has run them and exited. */
  readonly totals: Promise<HeavyTotals>
}

/**
 * A loopback address of 127.1.0.0/16 (the other clients' are in 127.0.0.0/24), another each
 * run: the thousands of ports a run leaves in TIME_WAIT for 60 s would otherwise keep the next
 * run from the same address from connecting (binding a source address takes a port of its own).
 */
function freshAddress (): string {
  return `127.1.${Math.floor(Math.random() * 256)}.${1 + Math.floor(Math.random() * 254)}`
}

/**
 * A heavy client in a process of its own (closed-loop.mjs), as a scraper runs: `connections`
 * connections from one loopback address (`address`, or one of its own), each sending its next
 * cache-missing read as soon as the last is answered, for `seconds` once ready. With
 * `asClients`, its connections say they forward for that many clients (X-Forwarded-For): the
 * same load, and the same cost to make it, from many clients to a replica that trusts it.
 */
export function startHeavyClient (origin: string, connections: number, seconds: number, address = freshAddress(), asClients?: number): HeavyClient {
  const args = [CLOSED_LOOP, origin, address, String(connections), String(seconds), ...(asClients === undefined ? [] : [String(asClients)])]
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] })
  // Listened for at once: the child may be done before its caller asks.
  const exited = once(child, 'exit')
  let out = ''
  let readyNow: () => void = () => {}
  const ready = new Promise<void>((resolve) => { readyNow = resolve })
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk
    if (out.startsWith('ready\n')) readyNow()
  })
  // Ready also if it exits without: its totals then say why.
  exited.then(readyNow, readyNow)
  return { address, child, ready, totals: exited.then(() => JSON.parse(out.trim().split('\n').at(-1) as string) as HeavyTotals) }
}
