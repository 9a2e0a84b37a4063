import type { ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { request } from 'undici'
import { DIST_MAIN } from '../../harness/dist-main.js'
import { spawnMain } from '../../harness/main-process.js'
import { freePort } from '../../harness/ports.js'
import { Child } from './ipc.js'

/** A server under test: where to send requests, its pid (for RSS) and how to stop it. */
export interface Server {
  readonly url: string
  readonly pid: number
  readonly label: string
  stop (): Promise<void>
}

export interface SimHandle {
  readonly url: string
  count (prefix?: string): Promise<number>
  reset (): Promise<void>
  latency (ms: number, prefix?: string): Promise<void>
  /** Adds `ms` to 1 in `every` answers under `prefix`. */
  slow (ms: number, every: number, prefix?: string): Promise<void>
  clear (): Promise<void>
  /** Each query costs `costMs` with at most `concurrency` at once (a real node); no arguments: free again. */
  capacity (costMs?: number, concurrency?: number): Promise<void>
  /** A block every `ms` (0: the clock stops). */
  blockEvery (ms: number): Promise<void>
  /** The simulator's head. */
  height (): Promise<number>
  stop (): Promise<void>
}

export async function startSim (): Promise<SimHandle> {
  const child = await Child.start<{ url: string }>('sim')
  return {
    url: child.ready.url,
    count: (prefix) => child.call<number>('count', { prefix }),
    reset: () => child.call('reset'),
    latency: (ms, prefix) => child.call('latency', { ms, prefix }),
    slow: (ms, every, prefix) => child.call('slow', { ms, every, prefix }),
    clear: () => child.call('clear'),
    capacity: (costMs, concurrency) => child.call('capacity', { costMs, concurrency }),
    blockEvery: (ms) => child.call('blockEvery', { ms }),
    height: () => child.call<number>('height'),
    stop: () => child.stop()
  }
}

/** Where a server's log goes and from which level; `stdout` is a file descriptor, or 'ignore' (/dev/null). */
export interface LogTo {
  readonly level: string
  readonly stdout: 'ignore' | number
}

/**
 * The bare Fastify baseline; with a log level its default logger writes to `stdout`. With a
 * `chainUrl` it also passes a chain read straight through (bench/children/bare.ts).
 */
export async function startBare (log?: LogTo & { readonly chainUrl?: string }): Promise<Server> {
  const args = log === undefined ? [] : [log.level, ...(log.chainUrl === undefined ? [] : [log.chainUrl])]
  const child = await Child.start<{ port: number }>('bare', args, {}, log?.stdout)
  return { url: `http://127.0.0.1:${child.ready.port}`, pid: child.pid, label: log === undefined ? 'bare fastify' : `bare fastify (logger at ${log.level})`, stop: () => child.stop() }
}

/** edge-api from dist/app.js in a bench child, e.g. with coalescing off or a custom pool. */
export async function startEdgeApp (chainUrl: string, coalesce = true, shedding: boolean | 'all' = true, pool?: object, metrics = true, logLevel?: string, env: Record<string, string> = {}): Promise<Server> {
  const mode = shedding === 'all' ? 'all' : shedding ? 'on' : 'off'
  const args = [chainUrl, coalesce ? 'on' : 'off', mode, ...(pool === undefined ? [] : [JSON.stringify(pool)])]
  const child = await Child.start<{ port: number }>('edge', args, { BENCH_METRICS: metrics ? 'on' : 'off', ...(logLevel === undefined ? {} : { BENCH_LOG_LEVEL: logLevel }), ...env })
  const label = `edge-api (app, coalesce ${coalesce ? 'on' : 'off'}, shedding ${mode}, metrics ${metrics ? 'on' : 'off'}${pool === undefined ? '' : ` pool ${JSON.stringify(pool)}`})`
  return { url: `http://127.0.0.1:${child.ready.port}`, pid: child.pid, label, stop: () => child.stop() }
}

export const hasMain = (): boolean => existsSync(DIST_MAIN)

export interface MainProcess extends Server {
  readonly child: ChildProcess
  /** Milliseconds from spawn to the first /healthz 200. */
  readonly startMs: number
  /** CPU milliseconds (user + system) the process had used by then: robust to a busy machine. */
  readonly startCpuMs: number
  readonly exited: Promise<{ code: number | null, signal: NodeJS.Signals | null, at: number }>
}

/**
 * The real thing: `node dist/main.js` (or another build's `main`), started as the tests start
 * it (harness/main-process.ts) and configured through its environment; its log goes to
 * `stdout` (a file descriptor) or nowhere, never to a pipe this process would have to read.
 */
export async function startMain (chainUrl: string, env: Record<string, string> = {}, stdout: 'ignore' | number = 'ignore', main?: string): Promise<MainProcess> {
  const port = await freePort()
  const started = performance.now()
  const { child, exited } = spawnMain({
    CHAIN_REST_URL: chainUrl,
    EDGE_API_PORT: String(port),
    EDGE_API_HOST: '127.0.0.1',
    EDGE_API_DRAIN_ANNOUNCE: '0',
    EDGE_API_LOG_LEVEL: 'warn',
    // Metrics on, as deployed, on a port of its own: several may run at once.
    EDGE_API_METRICS_PORT: String(await freePort()),
    // Benchmarks 1–13 measure the path below the answer cache (a request that reaches the
    // chain, or costs what one does): with the cache on (the default), their repeated reads
    // would be hits. Benchmark 14 measures the cache and sets it on and off itself.
    EDGE_API_CACHE_SIZE: '0',
    ...env
  }, { stdout, stderr: 'inherit', ...(main === undefined ? {} : { main }) })
  const url = `http://127.0.0.1:${port}`
  const answered = await firstHealthz(url, child)
  if (answered === undefined) {
    child.kill('SIGKILL')
    throw new Error(`${main ?? 'dist/main.js'} did not answer /healthz within 30 s`)
  }
  return {
    url,
    pid: child.pid as number,
    label: 'edge-api (dist/main.js)',
    child,
    startMs: answered - started,
    startCpuMs: await cpuMs(child.pid as number),
    exited,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
      await exited
    }
  }
}

/**
 * When (performance.now()) `url` first answered /healthz 200, polled every 2 ms: the process
 * has no other way to say "I answer now" but its log, and the log goes to a file or nowhere.
 * Undefined when the process exited or 30 s passed first.
 */
async function firstHealthz (url: string, child: ChildProcess): Promise<number | undefined> {
  const deadline = performance.now() + 30_000
  while (performance.now() < deadline && child.exitCode === null) {
    try {
      const res = await request(`${url}/healthz`, { reset: true })
      await res.body.dump()
      if (res.statusCode === 200) return performance.now()
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 2))
  }
  return undefined
}

/** utime + stime of a process, from /proc (Linux), in milliseconds. */
export async function cpuMs (pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8')
  // Fields after the command name (which may contain spaces) start after the last ")".
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  const ticks = Number(fields[11]) + Number(fields[12])
  return ticks * 1000 / CLOCK_TICKS
}

// USER_HZ: 100 on every Linux the project runs on (getconf CLK_TCK).
const CLOCK_TICKS = 100

/**
 * edge-api as deployed (dist/main.js) when it exists, else the app from dist/app.js; logging
 * at warn to /dev/null unless told otherwise (the app's log always goes to /dev/null).
 */
export async function startEdge (chainUrl: string, log?: LogTo): Promise<Server> {
  if (!hasMain()) return startEdgeApp(chainUrl, true, true, undefined, true, log?.level)
  return log === undefined ? startMain(chainUrl) : startMain(chainUrl, { EDGE_API_LOG_LEVEL: log.level }, log.stdout)
}
