// edge-api built from dist/ (what `npm run build` produced) with options main.js has no
// setting for: coalescing off, or undici Pool options to compare pool tunings.
// argv: <chain url> [coalesce on|off] [shedding on|off] [pool JSON, e.g. {"connections":8,"pipelining":4}]
import type { Pool } from 'undici'
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
const config = loadConfig({ CHAIN_REST_URL: chainUrl, EDGE_API_LOG_LEVEL: 'warn', EDGE_API_DRAIN_ANNOUNCE: '0' })
const poolOptions = poolJson === undefined ? undefined : JSON.parse(poolJson) as Pool.Options
const chain = new ChainClient({
  baseUrl: config.chainRestUrls,
  timeoutMs: config.chainTimeoutMs,
  concurrency: config.chainConcurrency,
  coalesce: coalesce !== 'off',
  maxResponseBytes: config.chainMaxResponseBytes,
  ...(poolOptions === undefined ? {} : { pool: poolOptions })
})
// under-pressure treats 0 as "no limit": with shedding off, a saturated run measures the
// work itself instead of how many cheap 503s the server can write.
const app = await buildApp({
  config,
  chain,
  ...(shedding === 'off' ? { loadShedding: { maxEventLoopUtilization: 0, maxEventLoopDelay: 0 } } : {})
})
await app.listen({ port: 0, host: '127.0.0.1' })
const address = app.server.address()
serveCommands({ port: typeof address === 'object' && address !== null ? address.port : 0, pid: process.pid }, {})
