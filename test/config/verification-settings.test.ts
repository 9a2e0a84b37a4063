import t from 'tap'
import { loadConfig } from '../../src/config.js'
import { UNBONDING_PERIOD_MS, VERIFICATION_MODES } from '../../src/config/verification-settings.js'
import { refusal } from '../fixtures/config-refusal.js'

// Verified reads' settings (src/config/verification-settings.ts) through loadConfig, as the
// service reads them. test/config/verification-settings.process.test.ts refuses over a real
// process; what an expired root does is test/light/trust-root.test.ts's.

const base = { CHAIN_REST_URL: 'http://node:1317' }
const HASH = 'F740121F553B5418C3EFBD343C2DBFE9E007BB67B0D020A0741374BAB65242A4'
const root = { EDGE_API_TRUST_HEIGHT: '1234567', EDGE_API_TRUST_HASH: HASH }

t.test('off by default: no root needed, a trusting period of 14 days', async (t) => {
  const config = loadConfig(base)
  t.same(config.verification, { mode: 'off', trustRoot: undefined, trustingPeriodMs: 14 * 24 * 3600 * 1000, rpcUrls: undefined })
  t.same(config.warnings, [])
  t.equal(UNBONDING_PERIOD_MS, 1_814_400_000, 'the chain\'s unbonding_time, 1814400s')
})

t.test('a root is read whatever the mode; any mode but off asks for it; strict warns that it refuses every route that is not proven', async (t) => {
  const off = loadConfig({ ...base, ...root, EDGE_API_TRUST_HASH: HASH.toLowerCase() }).verification
  t.same(off.trustRoot, { height: 1_234_567n, hash: Buffer.from(HASH, 'hex') }, 'hex in either case')
  for (const mode of VERIFICATION_MODES.filter((m) => m !== 'off')) {
    const config = loadConfig({ ...base, ...root, EDGE_API_VERIFICATION: mode, EDGE_API_TRUSTING_PERIOD: '503h59m59s' })
    t.equal(config.verification.mode, mode)
    t.equal(config.verification.trustingPeriodMs, UNBONDING_PERIOD_MS - 1000, `${mode}: just below the unbonding period`)
    if (mode === 'strict') t.match(config.warnings, [/^EDGE_API_VERIFICATION=strict: only the proven routes .* every other latest-state \/v1 route answers 503/])
    else t.same(config.warnings, [], `${mode}: what it asks for is what it does`)
  }
  t.same(loadConfig({ ...base, EDGE_API_TRUST_HEIGHT: '9223372036854775807', EDGE_API_TRUST_HASH: HASH }).verification.trustRoot?.height, 2n ** 63n - 1n, 'int64\'s largest height')
  t.same(loadConfig({ ...base, EDGE_API_VERIFICATION: '', EDGE_API_TRUST_HEIGHT: ' ', EDGE_API_TRUSTING_PERIOD: '' }).verification, { mode: 'off', trustRoot: undefined, trustingPeriodMs: 1_209_600_000, rpcUrls: undefined }, 'empty means unset')
})

t.test('a mode but off without its root refuses to boot, naming the missing variable', async (t) => {
  refusal(t, { ...base, EDGE_API_VERIFICATION: 'headers' }, 'EDGE_API_TRUST_HEIGHT', /^EDGE_API_TRUST_HEIGHT is required when EDGE_API_VERIFICATION=headers: the height of a header you trust/)
  refusal(t, { ...base, EDGE_API_VERIFICATION: 'strict', EDGE_API_TRUST_HEIGHT: '5' }, 'EDGE_API_TRUST_HASH', /^EDGE_API_TRUST_HASH is required when EDGE_API_VERIFICATION=strict: the hash of the header at EDGE_API_TRUST_HEIGHT/)
  refusal(t, { ...base, EDGE_API_VERIFICATION: 'answers', EDGE_API_TRUST_HASH: HASH }, 'EDGE_API_TRUST_HEIGHT', /is required when EDGE_API_VERIFICATION=answers/)
})

t.test('a trusting period at or beyond the chain\'s unbonding period refuses to boot', async (t) => {
  for (const bad of ['504h', '600h', '0', '-1h']) {
    refusal(t, { ...base, EDGE_API_TRUSTING_PERIOD: bad }, 'EDGE_API_TRUSTING_PERIOD', new RegExp(`^EDGE_API_TRUSTING_PERIOD="${bad}" is invalid: must be greater than 0 and below the chain's unbonding period, 504h \\(21 days\\)`))
  }
  // Go's durations have no days: 14 days is 336h.
  refusal(t, { ...base, EDGE_API_TRUSTING_PERIOD: '14d' }, 'EDGE_API_TRUSTING_PERIOD', /^EDGE_API_TRUSTING_PERIOD="14d" is invalid: must be a duration such as/)
})

t.test('a malformed mode, height or hash refuses to boot, naming the variable', async (t) => {
  refusal(t, { ...base, EDGE_API_VERIFICATION: 'on' }, 'EDGE_API_VERIFICATION', /^EDGE_API_VERIFICATION="on" is invalid: must be one of off, headers, answers, strict$/)
  for (const bad of ['0', '-1', '1.5', 'abc', '9223372036854775808', '00000000000000000001']) {
    refusal(t, { ...base, EDGE_API_TRUST_HEIGHT: bad, EDGE_API_TRUST_HASH: HASH }, 'EDGE_API_TRUST_HEIGHT', /^EDGE_API_TRUST_HEIGHT=".*" is invalid: must be a block height from 1 to 9223372036854775807$/)
  }
  for (const bad of [HASH.slice(1), `${HASH}00`, HASH.replace('F', 'G'), `0x${HASH.slice(2)}`]) {
    refusal(t, { ...base, ...root, EDGE_API_TRUST_HASH: bad }, 'EDGE_API_TRUST_HASH', /^EDGE_API_TRUST_HASH=".*" is invalid: must be a header hash: 64 hex digits/)
  }
})

t.test('EDGE_API_CHAIN_RPC_URL: one RPC base URL per node, by CHAIN_REST_URL\'s order, an entry empty for a node without one', async (t) => {
  const nodes = { CHAIN_REST_URL: 'http://a:1317,http://b:1317,http://c:1317' }
  const headers = { ...nodes, ...root, EDGE_API_VERIFICATION: 'headers' }
  t.same(loadConfig({ ...headers, EDGE_API_CHAIN_RPC_URL: 'http://a:26657/, https://b.example/rpc,http://[::1]:26657' }).verification.rpcUrls,
    ['http://a:26657', 'https://b.example/rpc', 'http://[::1]:26657'], 'each normalised as CHAIN_REST_URL\'s (no trailing slash)')
  const some = loadConfig({ ...headers, EDGE_API_CHAIN_RPC_URL: 'http://a:26657,,' })
  t.same(some.verification.rpcUrls, ['http://a:26657', undefined, undefined], 'the other nodes without one')
  t.same(some.warnings, [], 'no warning while verifying')
  t.same(loadConfig({ ...base, ...root, EDGE_API_VERIFICATION: 'headers', EDGE_API_CHAIN_RPC_URL: 'http://node:26657' }).verification.rpcUrls, ['http://node:26657'], 'one node, one URL')
  const off = loadConfig({ ...base, EDGE_API_CHAIN_RPC_URL: 'http://node:26657' })
  t.same(off.verification.rpcUrls, ['http://node:26657'], 'read whatever the mode')
  t.same(off.warnings, ['EDGE_API_CHAIN_RPC_URL is set but EDGE_API_VERIFICATION=off: only the verified-height cursor reads it, so it is not used'], 'off: said to be unused')
})

t.test('a malformed EDGE_API_CHAIN_RPC_URL refuses to boot, naming the variable and what is wrong', async (t) => {
  const nodes = { CHAIN_REST_URL: 'http://a:1317,http://b:1317', ...root, EDGE_API_VERIFICATION: 'headers' }
  const count = /^EDGE_API_CHAIN_RPC_URL=".*" is invalid: must be one CometBFT RPC base URL per CHAIN_REST_URL node, in the same order, .*; it has (\d) entries for 2 nodes$/
  refusal(t, { ...nodes, EDGE_API_CHAIN_RPC_URL: 'http://a:26657' }, 'EDGE_API_CHAIN_RPC_URL', count)
  refusal(t, { ...nodes, EDGE_API_CHAIN_RPC_URL: 'http://a:26657,http://b:26657,http://c:26657' }, 'EDGE_API_CHAIN_RPC_URL', count)
  refusal(t, { ...base, EDGE_API_CHAIN_RPC_URL: 'http://a:26657,http://b:26657' }, 'EDGE_API_CHAIN_RPC_URL', /it has 2 entries for 1 node$/)
  for (const bad of ['a:26657', 'tcp://a:26657', 'http://a:26657?x=1', 'http://a:26657#top', 'not a url']) {
    refusal(t, { ...nodes, EDGE_API_CHAIN_RPC_URL: `http://b:26657,${bad}` }, 'EDGE_API_CHAIN_RPC_URL', new RegExp(`; ${JSON.stringify(bad).replace(/[?#.]/g, '\\$&')} is not an http:// or https:// base URL without query or fragment$`))
  }
  refusal(t, { ...nodes, EDGE_API_CHAIN_RPC_URL: ' , ' }, 'EDGE_API_CHAIN_RPC_URL', /at least one not empty; unset it for none$/)
  refusal(t, { ...nodes, EDGE_API_CHAIN_RPC_URL: 'http://a:26657,http://a:26657/' }, 'EDGE_API_CHAIN_RPC_URL', /lists http:\/\/a:26657 twice; each node has its own$/)
})
