// edge-api built from dist/ (what `npm run build` produced) with options main.js has no
// setting for: coalescing off, or undici Pool options to compare pool tunings.
// argv: <chain url> [coalesce on|off] [shedding on|off] [pool JSON, e.g. {"connections":8,"pipelining":4}]
// env: BENCH_METRICS=off serves and records no metrics (default: on, on any free port).
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
  EDGE_API_LOG_LEVEL: 'warn',
  EDGE_API_DRAIN_ANNOUNCE: '0',
  EDGE_API_HOST: '127.0.0.1',
  EDGE_API_PORT: '0',
  EDGE_API_METRICS_PORT: 'off'
})
const poolOptions = poolJson === undefined ? undefined : JSON.parse(poolJson) as Pool.Options
// The same wiring as main.js (service.ts); only the chain client and shedding options differ.
const { port } = await startService({
  config,
  logger: createLogger(config.logLevel),
  chain: {
    coalesce: coalesce !== 'off',
    ...(poolOptions === undefined ? {} : { pool: poolOptions })
  },
  // under-pressure treats 0 as "no limit": with shedding off, a saturated run measures the
  // work itself instead of how many cheap 503s the server can write.
  ...(shedding === 'off' ? { loadShedding: { maxEventLoopUtilization: 0, maxEventLoopDelay: 0 } } : {}),
  // On as deployed (any free port: several children run at once); off for the comparison.
  ...(process.env.BENCH_METRICS === 'off' ? {} : { metricsPort: 0 })
})
serveCommands({ port, pid: process.pid }, {})
