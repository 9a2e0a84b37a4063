// The load generator: autocannon in its own process, so it never shares an event loop
// with a server it measures. Driven over IPC by bench/run.ts.
import autocannon from 'autocannon'
import { serveCommands } from '../lib/ipc.js'
import { openLoop } from '../lib/open-loop.js'
import { percentile } from '../lib/stats.js'

export interface LoadOptions {
  readonly url: string
  /** Paths cycled through in order (one per request); just `url` when absent. */
  readonly paths?: readonly string[]
  readonly connections: number
  readonly durationS?: number
  /** A fixed number of requests instead of a duration. */
  readonly amount?: number
  /** Requests per second over all connections (autocannon's overallRate). */
  readonly overallRate?: number
  readonly warmupS?: number
}

export interface LoadResult {
  /** Every answered request, whatever its status. */
  readonly requests: number
  /** 2xx answers per second: a shed 503 is cheap and must not count as throughput. */
  readonly rps: number
  readonly ok: number
  readonly errors: number
  readonly timeouts: number
  readonly non2xx: number
  readonly statusCodes: Record<string, number>
  /** From our own float samples (autocannon's histogram is in whole milliseconds). */
  readonly p50: number
  readonly p90: number
  readonly p99: number
  readonly max: number
  readonly mean: number
  readonly durationS: number
}

async function run (options: LoadOptions): Promise<LoadResult> {
  if (options.warmupS !== undefined && options.warmupS > 0) {
    await autocannon({ ...base(options), duration: options.warmupS, overallRate: options.overallRate })
  }
  // Float samples of every answered request's latency (2xx or not); grows geometrically, bounded by the run.
  let samples = new Float64Array(1 << 16)
  let n = 0
  const instance = autocannon({
    ...base(options),
    ...(options.amount !== undefined ? { amount: options.amount } : { duration: options.durationS ?? 3 }),
    overallRate: options.overallRate
  })
  instance.on('response', (_client: unknown, _status: number, _bytes: number, responseTime: number) => {
    if (n === samples.length) {
      const bigger = new Float64Array(samples.length * 2)
      bigger.set(samples)
      samples = bigger
    }
    samples[n++] = responseTime
  })
  const result = await instance
  const sorted = samples.subarray(0, n).sort()
  let sum = 0
  for (let i = 0; i < n; i++) sum += sorted[i] as number
  const statusCodes: Record<string, number> = {}
  for (const [code, { count }] of Object.entries(result.statusCodeStats ?? {})) statusCodes[code] = count
  const durationS = result.duration
  let ok = 0
  for (const [code, count] of Object.entries(statusCodes)) if (code.startsWith('2')) ok += count
  return {
    requests: result.requests.total,
    rps: ok / durationS,
    ok,
    errors: result.errors,
    timeouts: result.timeouts,
    non2xx: result.non2xx,
    statusCodes,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: n > 0 ? sorted[n - 1] as number : Number.NaN,
    mean: n > 0 ? sum / n : Number.NaN,
    durationS
  }
}

function base (options: LoadOptions): autocannon.Options {
  return {
    url: options.url,
    connections: options.connections,
    pipelining: 1,
    timeout: 10,
    ...(options.paths !== undefined ? { requests: options.paths.map((path) => ({ method: 'GET' as const, path })) } : {})
  }
}

serveCommands({ pid: process.pid }, { run, open: openLoop })
