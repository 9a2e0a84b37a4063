import t from 'tap'
import { startMain } from '../../harness/main-process.js'

// The verification settings refused by a real process (node dist/main.js, as deployed): exit 1
// and one log line naming the variable; and a mode this build cannot act on yet is logged as
// a warning at boot, so no operator believes answers are verified. Needs npm run build.

t.setTimeout(120_000)
const HASH = 'F740121F553B5418C3EFBD343C2DBFE9E007BB67B0D020A0741374BAB65242A4'
const NODE = { CHAIN_REST_URL: 'http://127.0.0.1:1' }

t.test('a bad verification setting: exit 1 with one line naming the variable', async (t) => {
  const cases: Array<[Record<string, string>, string, RegExp]> = [
    [{ EDGE_API_TRUSTING_PERIOD: '504h' }, 'EDGE_API_TRUSTING_PERIOD', /^EDGE_API_TRUSTING_PERIOD="504h" is invalid: must be greater than 0 and below the chain's unbonding period, 504h \(21 days\)/],
    [{ EDGE_API_VERIFICATION: 'headers' }, 'EDGE_API_TRUST_HEIGHT', /^EDGE_API_TRUST_HEIGHT is required when EDGE_API_VERIFICATION=headers/],
    [{ EDGE_API_VERIFICATION: 'answers', EDGE_API_TRUST_HEIGHT: '7' }, 'EDGE_API_TRUST_HASH', /^EDGE_API_TRUST_HASH is required when EDGE_API_VERIFICATION=answers/],
    [{ EDGE_API_TRUST_HASH: 'abc' }, 'EDGE_API_TRUST_HASH', /^EDGE_API_TRUST_HASH="abc" is invalid: must be a header hash: 64 hex digits/],
    [{ EDGE_API_CHAIN_RPC_URL: 'node:26657' }, 'EDGE_API_CHAIN_RPC_URL', /^EDGE_API_CHAIN_RPC_URL="node:26657" is invalid: must be one CometBFT RPC base URL per CHAIN_REST_URL node, .*; "node:26657" is not an http:\/\/ or https:\/\/ base URL/],
    [{ EDGE_API_CHAIN_RPC_URL: 'http://a:26657,http://b:26657' }, 'EDGE_API_CHAIN_RPC_URL', /it has 2 entries for 1 node$/]
  ]
  await Promise.all(cases.map(async ([env, variable, message]) => {
    const main = startMain({ ...NODE, ...env })
    const { code } = await main.exited
    t.equal(code, 1, `${variable}: exit 1`)
    t.equal(main.lines.length, 1, `${variable}: one log line`)
    t.match(main.lines[0], { level: 60, variable, msg: message })
  }))
})

t.test('strict with its root boots, warning that it refuses every route that is not proven', async (t) => {
  const main = startMain({ ...NODE, EDGE_API_PORT: '0', EDGE_API_HOST: '127.0.0.1', EDGE_API_VERIFICATION: 'strict', EDGE_API_TRUST_HEIGHT: '7', EDGE_API_TRUST_HASH: HASH })
  t.teardown(() => main.child.kill('SIGKILL'))
  const warning = await main.waitFor('configuration warning')
  t.match(warning, { level: 40, warning: /^EDGE_API_VERIFICATION=strict: only the proven routes .* every other latest-state \/v1 route answers 503/ })
  await main.waitFor('listening')
})
