// edge-api built from dist/ (what `npm run build` produced) with options main.js has no
// setting for: coalescing off, load shedding off or refusing everything, or an injected undici
// Pool to compare pool tunings. Logs at warn, or at $BENCH_LOG_LEVEL.
// argv: <chain url> [coalesce on|off] [shedding on|off|all] [pool JSON, e.g. {"connections":8,"pipelining":4}]
import { Pool } from 'undici'
import { serveCommands } from '../lib/ipc.js'

type AppModule = typeof import('../../src/app.js')
type ClientModule = typeof import('../../src/chain/client.js')
type ConfigModule = typeof import('../../src/config.js')

const dist = new URL('../../dist/', import.meta.url)
// Imported by URL so the benchmark runs the compiled JavaScript, never tsx's transpile of src.
const { buildApp } = await import(new URL('app.js', dist).href) as AppModule
const { ChainClient } = await import(new URL('chain/client.js', dist).href) as ClientModule
const { loadConfig } = await import(new URL('config.js', dist).href) as ConfigModule

const [chainUrl = '', coalesce = 'on', shedding = 'on', poolJson] = process.argv.slice(2)
const config = loadConfig({ CHAIN_REST_URL: chainUrl, EDGE_API_LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn', EDGE_API_DRAIN_ANNOUNCE: '0' })
const poolOptions = poolJson === undefined ? undefined : JSON.parse(poolJson) as Pool.Options
const chain = new ChainClient({
  baseUrl: config.chainRestUrl,
  timeoutMs: config.chainTimeoutMs,
  concurrency: config.chainConcurrency,
  coalesce: coalesce !== 'off',
  ...(poolOptions === undefined ? {} : { dispatcher: new Pool(new URL(config.chainRestUrl).origin, poolOptions) })
})
// 0 means "no limit": with shedding off, a saturated run measures the work itself instead of
// how many cheap 503s the server can write. "all": a 1-byte heap limit refuses every /v1
// request once the boot grace is over, to measure what a refusal costs.
const loadShedding = shedding === 'off'
  ? { maxEventLoopUtilization: 0, maxEventLoopDelay: 0 }
  : shedding === 'all' ? { maxHeapUsedBytes: 1 } : undefined
const app = await buildApp({ config, chain, ...(loadShedding === undefined ? {} : { loadShedding }) })
await app.listen({ port: 0, host: '127.0.0.1' })
const address = app.server.address()
serveCommands({ port: typeof address === 'object' && address !== null ? address.port : 0, pid: process.pid }, {})
