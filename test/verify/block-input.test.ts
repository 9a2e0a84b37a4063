import t from 'tap'
import { prepareBlock } from '../../src/verify/block-input.js'
import { MAX_TOTAL_VOTING_POWER } from '../../src/cometbft/types.js'
import { testSigners } from '../fixtures/verify/signed-commit.js'

// Run in the worker thread by the route (test/routes/v1/verify*.test.ts); inline here.

t.test('prepareBlock: the block and the supplied set, or the 400 message', async (t) => {
  const signers = testSigners('prepare', [MAX_TOTAL_VOTING_POWER - 2n, 1n])
  const commit = { height: '4', round: 0, block_id: { hash: Buffer.alloc(32, 1).toString('base64'), part_set_header: { total: 1, hash: Buffer.alloc(32, 2).toString('base64') } }, signatures: [{ block_id_flag: 'BLOCK_ID_FLAG_ABSENT' }] }
  const block = { header: { chain_id: 'c', height: '5' }, last_commit: commit }
  const validators = signers.map((s) => ({ pub_key: Buffer.from(s.pubKey).toString('base64'), voting_power: String(s.power) }))
  const prepared = prepareBlock({ block, validators })
  t.match(prepared, { ok: true, value: { chainId: 'c', height: 5n, lastCommit: { height: 4n } } })
  t.same((prepared as { value: { validators: ReadonlyArray<{ votingPower: bigint }> } }).value.validators.map((v) => v.votingPower), [MAX_TOTAL_VOTING_POWER - 2n, 1n], 'exact powers')
  t.same(prepareBlock({ block: { header: block.header }, validators }), { ok: false, error: 'invalid Block: last_commit: nil Commit' })
  t.same(prepareBlock({ block: { header: { chain_id: 'c', height: 'x' } }, validators }), { ok: false, error: 'invalid Block: header.height: must be a 64-bit integer (a JSON number or a decimal string)' })
  t.same(prepareBlock({ block, validators: [{ pub_key: 'AA==', voting_power: 1 }] }), { ok: false, error: 'Error decoding public key: validators[0].pub_key must be standard base64 of a 32-byte ed25519 key' })
  t.same(prepareBlock({ block, validators: validators.map((v) => ({ ...v, voting_power: '1000000000000000000' })) }),
    { ok: false, error: `invalid validators: total voting power of resulting valset exceeds max ${MAX_TOTAL_VOTING_POWER}` })
})
