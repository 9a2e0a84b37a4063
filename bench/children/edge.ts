// edge-api built from dist/ (what `npm run build` produced) with options main.js has no
// setting for: coalescing off, load shedding off or refusing everything, or undici Pool
// options to compare pool tunings. Logs at warn, or at $BENCH_LOG_LEVEL.
// argv: <chain url> [coalesce on|off] [shedding on|off|all] [pool JSON, e.g. {"connections":8,"pipelining":4}]
// env: BENCH_METRICS=off serves and records no metrics (default: on, on any free port);
// EDGE_API_OTEL_ENABLED and OTEL_* configure tracing as they do main.js.
import type { Pool } from 'undici'
import { serveCommands } from '../lib/ipc.js'

type ConfigModule = typeof import('../../src/config.js')
type LoggerModule = typeof import('../../src/logger.js')
type ServiceModule = typeof import('../../src/service.js')

const dist = new URL('../../dist/', import.meta.url)
// Imported by URL so the benchmark runs the compiled JavaScript, never tsx's transpile of src.
const { loadConfig } = await import(new URL('config.js', dist).href) as ConfigModule
const { createLogger } = await import(new URL('logger.js', dist).href) as LoggerModule
const { startService } = await import(new URL('service.js', dist).href) as ServiceModule

const [chainUrl = '', coalesce = 'on', shedding = 'on', poolJson] = process.argv.slice(2)
const config = loadConfig({
  CHAIN_REST_URL: chainUrl,
  EDGE_API_LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
  EDGE_API_DRAIN_ANNOUNCE: '0',
  EDGE_API_HOST: '127.0.0.1',
  EDGE_API_PORT: '0',
  EDGE_API_METRICS_PORT: 'off',
  // The path below the answer cache, as in startMain (bench/lib/servers.ts).
  EDGE_API_CACHE_SIZE: '0',
  ...Object.fromEntries(Object.entries(process.env).filter(([key]) => key === 'EDGE_API_OTEL_ENABLED' || key.startsWith('OTEL_')))
})
const poolOptions = poolJson === undefined ? undefined : JSON.parse(poolJson) as Pool.Options
// 0 means "no limit": with shedding off, a saturated run measures the work itself instead of
// how many cheap 503s the server can write. "all": a 1-byte heap limit refuses every /v1
// request once the boot grace is over, to measure what a refusal costs.
const loadShedding = shedding === 'off'
  ? { maxEventLoopUtilization: 0, maxEventLoopDelay: 0 }
  : shedding === 'all' ? { maxHeapUsedBytes: 1 } : undefined
// The same wiring as main.js (service.ts); only the chain client and shedding options differ.
const { port } = await startService({
  config,
  logger: createLogger(config.logLevel),
  chain: {
    coalesce: coalesce !== 'off',
    ...(poolOptions === undefined ? {} : { pool: poolOptions })
  },
  ...(loadShedding === undefined ? {} : { loadShedding }),
  // On as deployed (any free port: several children run at once); off for the comparison.
  ...(process.env.BENCH_METRICS === 'off' ? {} : { metricsPort: 0 })
})
serveCommands({ port, pid: process.pid }, {})
