import t from 'tap'
import { loadConfig } from '../../src/config.js'
import { refusal } from '../fixtures/config-refusal.js'

// The chain's nodes and how they are read (src/config/chain-settings.ts), through loadConfig
// as the service reads them.

const base = { CHAIN_REST_URL: 'http://node:1317' }

t.test('hedging: a percentage of reads up to 50%, or off; its floor a duration up to 10s', async (t) => {
  t.equal(loadConfig({ ...base, EDGE_API_HEDGE: 'off' }).hedgeBudget, 0)
  t.equal(loadConfig({ ...base, EDGE_API_HEDGE: '5%' }).hedgeBudget, 0.05)
  t.equal(loadConfig({ ...base, EDGE_API_HEDGE: '50%' }).hedgeBudget, 0.5)
  t.equal(loadConfig({ ...base, EDGE_API_HEDGE: '0.5%' }).hedgeBudget, 0.005)
  t.equal(loadConfig({ ...base, EDGE_API_HEDGE_MIN_DELAY: '200ms' }).hedgeMinDelayMs, 200)
  t.equal(loadConfig({ ...base, EDGE_API_HEDGE_MIN_DELAY: '10s' }).hedgeMinDelayMs, 10_000)
  const allowed = /^EDGE_API_HEDGE="[^"]*" is invalid: must be the most reads hedged as a percentage above 0 and at most 50% \(example: 10%\), or off$/
  for (const value of ['0%', '51%', '10', '0.1', 'on', 'true', '100%', '-5%']) refusal(t, { ...base, EDGE_API_HEDGE: value }, 'EDGE_API_HEDGE', allowed)
  refusal(t, { ...base, EDGE_API_HEDGE_MIN_DELAY: '0' }, 'EDGE_API_HEDGE_MIN_DELAY', /^EDGE_API_HEDGE_MIN_DELAY="0" is invalid: must be greater than 0 and at most 10s$/)
  refusal(t, { ...base, EDGE_API_HEDGE_MIN_DELAY: '11s' }, 'EDGE_API_HEDGE_MIN_DELAY', /at most 10s/)
  refusal(t, { ...base, EDGE_API_HEDGE_MIN_DELAY: '50' }, 'EDGE_API_HEDGE_MIN_DELAY', /must be a duration/)
})

t.test('EDGE_API_CHAIN_MAX_RESPONSE takes bytes, KiB or MiB', async (t) => {
  t.equal(loadConfig({ ...base, EDGE_API_CHAIN_MAX_RESPONSE: '65536' }).chainMaxResponseBytes, 65536)
  t.equal(loadConfig({ ...base, EDGE_API_CHAIN_MAX_RESPONSE: '100000' }).chainMaxResponseBytes, 100000)
  t.equal(loadConfig({ ...base, EDGE_API_CHAIN_MAX_RESPONSE: '256MiB' }).chainMaxResponseBytes, 256 * 1024 * 1024)
})

t.test('CHAIN_REST_URL must be an http(s) base URL', async (t) => {
  for (const bad of ['node:1317', 'ftp://node:1317', 'http://node:1317/?x=1', 'http://node:1317/#top', 'http://']) {
    refusal(t, { CHAIN_REST_URL: bad }, 'CHAIN_REST_URL', /^CHAIN_REST_URL=".*" is invalid: must be an http:\/\/ or https:\/\/ base URL without query or fragment \(example: http:\/\/node:1317\), or several separated by commas \(http:\/\/a:1317,http:\/\/b:1317\)$/)
  }
})

t.test('CHAIN_REST_URL lists several nodes of one chain, separated by commas', async (t) => {
  t.same(loadConfig({ CHAIN_REST_URL: 'http://a:1317,http://b:1317' }).chainRestUrls, ['http://a:1317', 'http://b:1317'])
  t.same(loadConfig({ CHAIN_REST_URL: ' http://a:1317/ , https://b.example/api/,http://c:1317 ' }).chainRestUrls,
    ['http://a:1317', 'https://b.example/api', 'http://c:1317'], 'trimmed and normalised, in the order given')
  refusal(t, { CHAIN_REST_URL: 'http://a:1317,b:1317' }, 'CHAIN_REST_URL', /^CHAIN_REST_URL="http:\/\/a:1317,b:1317" is invalid: must be an http:\/\/ or https:\/\/ base URL .*; "b:1317" is not$/)
  refusal(t, { CHAIN_REST_URL: 'http://a:1317,' }, 'CHAIN_REST_URL', /; "" is not$/)
  refusal(t, { CHAIN_REST_URL: 'http://a:1317, ,http://b:1317' }, 'CHAIN_REST_URL', /; "" is not$/)
  refusal(t, { CHAIN_REST_URL: 'http://a:1317,http://b:1317,http://a:1317/' }, 'CHAIN_REST_URL', /^CHAIN_REST_URL=".*" is invalid: lists http:\/\/a:1317 twice; each node once$/)
})

t.test('CHAIN_REST_URL is required, unless CHAIN_GRPC_URL lets us derive it (with a warning)', async (t) => {
  refusal(t, {}, 'CHAIN_REST_URL', /^CHAIN_REST_URL is required \(example: http:\/\/node:1317\)$/)
  const derived = loadConfig({ CHAIN_GRPC_URL: 'node:9090' })
  t.same(derived.chainRestUrls, ['http://node:1317'])
  t.same(derived.warnings, ['CHAIN_REST_URL is unset; derived http://node:1317 from CHAIN_GRPC_URL=node:9090. Set CHAIN_REST_URL to override'])
  t.same(loadConfig({ CHAIN_GRPC_URL: 'dns:///node:9090' }).chainRestUrls, ['http://node:1317'])
  t.same(loadConfig({ CHAIN_GRPC_URL: 'grpc://[::1]:9090' }).chainRestUrls, ['http://[::1]:1317'])
  t.same(loadConfig({ CHAIN_GRPC_URL: 'node' }).chainRestUrls, ['http://node:1317'])
  t.same(loadConfig({ CHAIN_REST_URL: 'http://rest:1317', CHAIN_GRPC_URL: 'node:9090' }).warnings, [], 'explicit wins, silently')
  refusal(t, { CHAIN_GRPC_URL: 'node:9090/x y' }, 'CHAIN_GRPC_URL', /^CHAIN_GRPC_URL="node:9090\/x y" is invalid: must be host:port/)
})
