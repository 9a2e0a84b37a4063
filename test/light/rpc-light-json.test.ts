import t from 'tap'
import { LightJsonError } from '../../src/light/gateway-json.js'
import { rpcSignedHeader, rpcValidatorPage } from '../../src/light/rpc-light-json.js'
import { chainAnswer } from '../../harness/chain-simulator/chain-routes.js'
import { LATEST_HEIGHT } from '../../harness/chain-simulator/data/epochs.js'
import { noLies } from '../../harness/chain-simulator/lies.js'
import { SignedChain } from '../../harness/chain-simulator/signed-chain.js'

// CometBFT RPC's JSON read back as CometBFT's types: what the simulator's RPC writes in
// CometBFT 0.38's shape (harness/chain-simulator/chain-routes.ts; its socket test checks the
// envelope) comes back the same, and an answer that cannot be read is refused naming the field.

const HEIGHT = LATEST_HEIGHT - 5
const chain = new SignedChain({ validators: 100, firstHeight: HEIGHT - 3 })
const heights = { height: LATEST_HEIGHT, head: LATEST_HEIGHT, lowest: 1 }
const rpc = (path: string): any => (chainAnswer(chain, noLies(), new URL(path, 'http://node').pathname, new URL(path, 'http://node'), heights) as { result: unknown }).result
const commit = rpc(`/commit?height=${HEIGHT}`)

t.test('a signed header: the header field for field, and its own commit', async (t) => {
  t.same(rpcSignedHeader(commit), { header: chain.block(HEIGHT).header, commit: chain.block(HEIGHT).commit })
  const absent = { ...commit.signed_header.commit, signatures: [{ block_id_flag: 1, validator_address: '', timestamp: '0001-01-01T00:00:00Z', signature: null }] }
  t.same(rpcSignedHeader({ signed_header: { ...commit.signed_header, commit: absent } }).commit.signatures[0]?.signature, new Uint8Array(), 'an absent vote, as CometBFT writes it')
})

t.test('a signed header that cannot be read is refused naming the field', async (t) => {
  const withHeader = (fields: Record<string, unknown>): unknown => ({ ...commit, signed_header: { ...commit.signed_header, header: { ...commit.signed_header.header, ...fields } } })
  const withCommit = (value: unknown): unknown => ({ ...commit, signed_header: { ...commit.signed_header, commit: value } })
  const cases: Array<[unknown, string]> = [
    [null, 'result: must be an object'],
    [{ canonical: true }, 'result.signed_header: must be an object'],
    [withHeader({ app_hash: Buffer.alloc(32).toString('base64') }), 'result.signed_header.header.app_hash: must be hex'],
    [withHeader({ app_hash: 'ABC' }), 'result.signed_header.header.app_hash: must be hex'],
    [withHeader({ last_block_id: { hash: '', part_set_header: { total: 1, hash: '' } } }), 'result.signed_header.header.last_block_id.parts: must be an object'],
    [withHeader({ height: 5 }), 'result.signed_header.header.height: must be a decimal string'],
    [withCommit(null), 'result.signed_header.commit: must be an object'],
    [withCommit({ ...commit.signed_header.commit, signatures: 'none' }), 'result.signed_header.commit: last_commit.signatures: must be an array']
  ]
  for (const [value, message] of cases) t.throws(() => rpcSignedHeader(value), new LightJsonError(message), message)
})

t.test('a page of validators: the inputs and the total; one that cannot be read is refused naming the field', async (t) => {
  const set = chain.validatorSet(HEIGHT)
  const page = rpcValidatorPage(rpc(`/validators?height=${HEIGHT}&per_page=60&page=2`))
  t.equal(page.total, 100)
  t.same(page.validators, set.validators.slice(60).map((v) => ({ pubKey: v.pubKey, votingPower: v.votingPower })), 'the second page of 60: the last 40, in the set\'s order')
  const validator = rpc(`/validators?height=${HEIGHT}`).validators[0]
  const cases: Array<[unknown, string]> = [
    ['x', 'result: must be an object'],
    [{ validators: null, total: '1' }, 'result.validators: must be an array'],
    [{ validators: [validator], total: '-1' }, 'result.total: must be a count'],
    [{ validators: [validator], total: null }, 'result.total: must be a count'],
    [{ validators: [validator], total: ' ' }, 'result.total: must be a count'],
    [{ validators: [validator], total: 1.5 }, 'result.total: must be a count'],
    [{ validators: [{ ...validator, pub_key: { type: 'tendermint/PubKeySecp256k1', value: validator.pub_key.value } }], total: '1' }, 'result.validators[0].pub_key.type: must be tendermint/PubKeyEd25519'],
    [{ validators: [{ ...validator, pub_key: { type: 'tendermint/PubKeyEd25519', value: '***' } }], total: '1' }, 'result.validators[0].pub_key.value: must be base64'],
    [{ validators: [{ ...validator, voting_power: 10 }], total: '1' }, 'result.validators[0].voting_power: must be a decimal string'],
    [{ validators: [7], total: '1' }, 'result.validators[0]: must be an object']
  ]
  for (const [value, message] of cases) t.throws(() => rpcValidatorPage(value), new LightJsonError(message), message)
  t.equal(rpcValidatorPage({ validators: [], total: 0 }).total, 0, 'a count may be a number')
})
