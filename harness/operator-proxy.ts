import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { showStat } from './haproxy.js'
import { until } from './wait.js'

// An operator's own proxy in front of the replicas, as a Kubernetes ingress is (issue 52,
// "Behind an operator's own proxy"): a plain HAProxy with no per-client rules, passing every
// connection on and appending X-Forwarded-For, with the replicas trusting it
// (EDGE_API_TRUSTED_PROXIES). Not compose's router (compose/router): none of its limits, queue
// or busy rules; what the replicas must do alone behind such a proxy is what is measured.

/**
 * HAProxy keeps a connection to a server for reuse only while its file descriptors in use are
 * under tune.pool-low-fd-ratio (20%) of its maximum: a proxy holding thousands of client
 * connections (and as many to the replicas) is over it, and opens a new connection for every
 * request. These keep idle connections for reuse up to 90% (docs/clients-and-limits.md).
 */
export const PROXY_KEEPS_CONNECTIONS = ['tune.pool-low-fd-ratio 90', 'tune.pool-high-fd-ratio 95']

export interface OperatorProxyOptions {
  /** Extra global directives (the settings docs/clients-and-limits.md asks of such a proxy). */
  readonly global?: readonly string[]
  /** Its maxconn (global and frontend): the connections it holds from clients at once. @default 9000 */
  readonly maxconn?: number
  /** Extra backend directives. */
  readonly backend?: readonly string[]
  /** Its stdout (no access log is written; start-up lines only). @default 'ignore' */
  readonly stdout?: 'ignore' | 'inherit'
}

/** The proxy's configuration: `bind` host:port in front of `servers` (host:port each). */
export function operatorProxyConfig (bind: string, servers: readonly string[], options: OperatorProxyOptions = {}, socket?: string): string {
  return [
    'global',
    // An ingress sized for many clients: above the heavy client's 4,096 and everyone else's.
    `  maxconn ${options.maxconn ?? 9000}`,
    ...(options.global ?? []).map((line) => `  ${line}`),
    ...(socket === undefined ? [] : [`  stats socket ${socket} mode 600 level operator`]),
    'defaults',
    '  mode http',
    '  option forwardfor',
    '  timeout connect 5s',
    '  timeout client 120s',
    '  timeout server 120s',
    '  timeout http-keep-alive 10s',
    'frontend ingress',
    `  bind ${bind}`,
    `  maxconn ${options.maxconn ?? 9000}`,
    '  default_backend replicas',
    'backend replicas',
    '  balance roundrobin',
    ...(options.backend ?? []).map((line) => `  ${line}`),
    ...servers.map((server, i) => `  server replica${i + 1} ${server}`),
    ''
  ].join('\n')
}

/** The proxy running: `url` is where clients connect. */
export class OperatorProxy {
  readonly url: string
  readonly child: ChildProcess
  readonly #dir: string
  readonly #exited: Promise<unknown>

  private constructor (url: string, child: ChildProcess, dir: string) {
    this.url = url
    this.child = child
    this.#dir = dir
    this.#exited = once(child, 'exit')
  }

  /**
   * Its connections to the replicas so far: `opened` (new ones) and `reused` (a request sent on
   * one already open), from `show stat` (the backend's connect and reuse columns).
   */
  async upstream (): Promise<{ opened: number, reused: number }> {
    const backend = (await showStat(join(this.#dir, 'sock'), 'replicas')).find((row) => row.svname === 'BACKEND')
    const column = (name: string): number => Number(backend?.[name] ?? NaN)
    return { opened: column('connect'), reused: column('reuse') }
  }

  /** Starts HAProxy on 127.0.0.1:`port` in front of `servers`; resolves once it passes requests on. */
  static async start (port: number, servers: readonly string[], options: OperatorProxyOptions = {}): Promise<OperatorProxy> {
    const dir = mkdtempSync(join(tmpdir(), 'edge-op-'))
    const config = join(dir, 'haproxy.cfg')
    writeFileSync(config, operatorProxyConfig(`127.0.0.1:${port}`, servers, options, join(dir, 'sock')))
    const child = spawn('haproxy', ['-f', config, '-db'], { stdio: ['ignore', options.stdout ?? 'ignore', 'inherit'] })
    const proxy = new OperatorProxy(`http://127.0.0.1:${port}`, child, dir)
    await until(async () => await fetch(`${proxy.url}/healthz`).then((res) => res.status === 200, () => false), 'the operator\'s proxy to pass requests on', { intervalMs: 50, timeoutMs: 30_000 })
    return proxy
  }

  async stop (): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      this.child.kill('SIGKILL')
      await this.#exited
    }
    rmSync(this.#dir, { recursive: true, force: true })
  }
}
