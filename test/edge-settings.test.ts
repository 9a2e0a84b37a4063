import t, { type Test } from 'tap'
import { loadConfig } from '../src/config.js'
import { refusal } from './fixtures/config-refusal.js'

// The public edge's settings as an operator writes them; every bad value refuses to boot,
// naming the variable.

const base = { CHAIN_REST_URL: 'http://node:1317' }
const edge = (env: Record<string, string>) => loadConfig({ ...base, ...env }).edge

const refused = (t: Test, env: Record<string, string>, variable: string, message: RegExp): void => refusal(t, { ...base, ...env }, variable, message)

t.test('EDGE_API_TRUSTED_PROXIES: addresses, CIDRs and proxy-addr\'s names; anything else refused', async (t) => {
  t.same(edge({}).trustedProxies, [], 'none by default: a client is its socket\'s peer')
  t.same(edge({ EDGE_API_TRUSTED_PROXIES: '10.0.0.0/8, 127.0.0.1 2001:db8::/32,uniquelocal' }).trustedProxies, ['10.0.0.0/8', '127.0.0.1', '2001:db8::/32', 'uniquelocal'])
  for (const bad of ['10.0.0.0/33', '2001:db8::/129', 'router', '10.0.0.1/8/1', '10.0.0.0/x', '*']) {
    refused(t, { EDGE_API_TRUSTED_PROXIES: `127.0.0.1,${bad}` }, 'EDGE_API_TRUSTED_PROXIES', new RegExp(`addresses or CIDRs.*${JSON.stringify(bad).replace(/[*/]/g, '\\$&')} is none`))
  }
})

t.test('EDGE_API_CORS_ORIGINS: * by default, origins, or off', async (t) => {
  t.equal(edge({}).corsOrigins, '*')
  t.equal(edge({ EDGE_API_CORS_ORIGINS: 'off' }).corsOrigins, undefined)
  t.same(edge({ EDGE_API_CORS_ORIGINS: 'https://app.example.com, http://localhost:3000' }).corsOrigins, ['https://app.example.com', 'http://localhost:3000'])
  for (const bad of ['https://app.example.com/', 'app.example.com', 'ftp://x.example', 'https://*.example.com']) {
    refused(t, { EDGE_API_CORS_ORIGINS: bad }, 'EDGE_API_CORS_ORIGINS', /must be \*, off, or origins/)
  }
})

t.test('EDGE_API_BLOCKED_ROUTES: Go\'s prefixes below /v1, with * for one segment', async (t) => {
  t.same(edge({}).blockedRoutes, [])
  t.same(edge({ EDGE_API_BLOCKED_ROUTES: 'poc-batches training /v1/epochs/*/participants/' }).blockedRoutes, [['poc-batches'], ['training'], ['epochs', '*', 'participants']])
  for (const bad of ['poc batches?', 'a//b', 'epochs/:id']) {
    refused(t, { EDGE_API_BLOCKED_ROUTES: bad }, 'EDGE_API_BLOCKED_ROUTES', /must be route prefixes below \/v1/)
  }
})

t.test('EDGE_API_RATE_LIMIT: off by default; requests per window with an optional burst', async (t) => {
  t.equal(edge({}).rateLimit, undefined)
  t.same(edge({ EDGE_API_RATE_LIMIT: '600/1m' }).rateLimit, { requests: 600, windowMs: 60_000, burst: 600 }, 'the burst is the window\'s requests unless given')
  t.same(edge({ EDGE_API_RATE_LIMIT: '10/1m burst=600' }).rateLimit, { requests: 10, windowMs: 60_000, burst: 600 }, 'Go\'s front nginx')
  for (const bad of ['600', '600/m', '0/1m', '600/500ms', '600/25h', '600/1m burst=0', '600/1m burst 5', '2000000/1h', '-1/1m', '600/1m burst=2000000']) {
    refused(t, { EDGE_API_RATE_LIMIT: bad }, 'EDGE_API_RATE_LIMIT', /must be off, or requests per client per window with an optional burst: 600\/1m, or 10\/1m burst=600/)
  }
})
