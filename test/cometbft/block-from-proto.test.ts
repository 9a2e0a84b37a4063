import t from 'tap'
import { cometBlockFromGateway, cometProofOpsFromGateway, InvalidBlockError } from '../../src/cometbft/block-from-proto.js'

const b64 = (bytes: Buffer | string): string => Buffer.from(bytes).toString('base64')
const hash = (fill: number): string => b64(Buffer.alloc(32, fill))
const ADDRESS = Buffer.alloc(20, 0xab)

/** The tmproto.Block of the Go golden test (epoch_participants_golden_test.go@ef1a5efd), as the gateway writes it. */
function goldenStubBlock (): Record<string, unknown> {
  return {
    header: {
      version: { block: '11', app: '0' },
      chain_id: 'gonka-test',
      height: '101',
      time: '0001-01-01T00:00:00Z',
      last_block_id: { hash: '', part_set_header: { total: 0, hash: '' } },
      last_commit_hash: '',
      data_hash: '',
      validators_hash: '',
      next_validators_hash: '',
      consensus_hash: '',
      app_hash: b64('apphash'),
      last_results_hash: '',
      evidence_hash: '',
      proposer_address: b64(ADDRESS)
    },
    data: { txs: [] },
    evidence: { evidence: [] },
    last_commit: null
  }
}

const withHeader = (fields: Record<string, unknown>): Record<string, unknown> => {
  const block = goldenStubBlock()
  return { ...block, header: { ...(block.header as object), ...fields } }
}

t.test('the Go golden block: numeric height, app hash "apphash" as hex, hex proposer', async (t) => {
  const block = cometBlockFromGateway(goldenStubBlock())
  t.equal(block.header.height, 101)
  t.equal(block.header.app_hash, '61707068617368')
  t.same(block, {
    header: {
      version: { block: 11 },
      chain_id: 'gonka-test',
      height: 101,
      time: '0001-01-01T00:00:00Z',
      last_block_id: { hash: '', parts: { total: 0, hash: '' } },
      last_commit_hash: '',
      data_hash: '',
      validators_hash: '',
      next_validators_hash: '',
      consensus_hash: '',
      app_hash: '61707068617368',
      last_results_hash: '',
      evidence_hash: '',
      proposer_address: 'ABABABABABABABABABABABABABABABABABABABAB'
    },
    data: { txs: [] },
    evidence: { evidence: [] },
    last_commit: null
  })
  t.same(Object.keys(block.header), [
    'version', 'chain_id', 'height', 'time', 'last_block_id', 'last_commit_hash', 'data_hash', 'validators_hash',
    'next_validators_hash', 'consensus_hash', 'app_hash', 'last_results_hash', 'evidence_hash', 'proposer_address'
  ], 'types.Header field order')
})

t.test('hashes are upper-case hex; version.app is kept when set; heights stay exact', async (t) => {
  const block = cometBlockFromGateway({
    ...withHeader({ version: { block: '11', app: '3' }, height: '9223372036854775807', app_hash: b64(Buffer.from('c0ffee', 'hex')), data_hash: hash(0xcd) }),
    data: { txs: [b64('tx'), 'not base64 ✓'] }
  })
  t.same(block.header.version, { block: 11, app: 3 })
  t.equal(block.header.height, 9223372036854775807n)
  t.equal(block.header.app_hash, 'C0FFEE')
  t.equal(block.header.data_hash, 'CD'.repeat(32))
  t.same(block.data.txs, [b64('tx'), b64(Buffer.from('not base64 ✓', 'base64'))], 'txs re-encoded as Go writes []byte')
})

t.test('a sparse gateway block: Go zero values', async (t) => {
  t.throws(() => cometBlockFromGateway({}), InvalidBlockError, 'no header: block protocol 0 is refused')
  const block = cometBlockFromGateway({ header: { version: { block: 11 }, height: 1, proposer_address: b64(ADDRESS) } })
  t.same(block.data, { txs: [] })
  t.same(block.evidence, { evidence: [] })
  t.equal(block.header.chain_id, '')
  t.equal(block.header.time, '0001-01-01T00:00:00Z')
  t.equal(block.last_commit, null)
})

t.test('times are RFC3339Nano in UTC, without trailing zeros', async (t) => {
  const cases: Array<[unknown, string]> = [
    ['2026-01-15T10:00:00Z', '2026-01-15T10:00:00Z'],
    ['2026-01-15T10:00:00.000000000Z', '2026-01-15T10:00:00Z'],
    ['2026-01-15T10:00:00.120Z', '2026-01-15T10:00:00.12Z'],
    ['2026-01-15T10:00:00.123456789Z', '2026-01-15T10:00:00.123456789Z'],
    ['2026-01-15T12:30:00.5+02:30', '2026-01-15T10:00:00.5Z'],
    ['2026-01-15T10:00:00-01:00', '2026-01-15T11:00:00Z'],
    ['yesterday', '0001-01-01T00:00:00Z'],
    [null, '0001-01-01T00:00:00Z']
  ]
  for (const [time, expected] of cases) t.equal(cometBlockFromGateway(withHeader({ time })).header.time, expected, String(time))
})

t.test('a header CometBFT refuses is an InvalidBlockError (Go leaves the block out)', async (t) => {
  const cases: Array<[string, Record<string, unknown>]> = [
    ['wrong block protocol', { version: { block: '10' } }],
    ['chain id over 50 characters', { chain_id: 'c'.repeat(51) }],
    ['zero height', { height: '0' }],
    ['negative height', { height: '-1' }],
    ['proposer not 20 bytes', { proposer_address: b64(Buffer.alloc(19)) }],
    ['no proposer', { proposer_address: '' }],
    ['a short hash', { validators_hash: b64('short') }],
    ['a short last block id hash', { last_block_id: { hash: b64('short'), part_set_header: { total: 0, hash: '' } } }],
    ['a short part set hash', { last_block_id: { hash: '', part_set_header: { total: 1, hash: b64('short') } } }]
  ]
  for (const [name, fields] of cases) t.throws(() => cometBlockFromGateway(withHeader(fields)), InvalidBlockError, name)
  t.equal(cometBlockFromGateway(withHeader({ chain_id: 'c'.repeat(50), app_hash: b64('an app hash of any length') })).header.chain_id.length, 50)
})

const commitSig = (fields: Record<string, unknown>): Record<string, unknown> => ({
  block_id_flag: 'BLOCK_ID_FLAG_COMMIT',
  validator_address: b64(ADDRESS),
  timestamp: '2026-01-15T10:00:00.5Z',
  signature: b64(Buffer.alloc(64, 1)),
  ...fields
})
const blockId = { hash: hash(1), part_set_header: { total: 2, hash: hash(2) } }
const withCommit = (commit: Record<string, unknown>): Record<string, unknown> => ({ ...goldenStubBlock(), last_commit: commit })

t.test('the last commit: flags as numbers, absent signatures null', async (t) => {
  const block = cometBlockFromGateway(withCommit({
    height: '100',
    round: 2,
    block_id: blockId,
    signatures: [
      commitSig({}),
      { block_id_flag: 'BLOCK_ID_FLAG_ABSENT', validator_address: '', timestamp: '0001-01-01T00:00:00Z', signature: '' },
      commitSig({ block_id_flag: 3 })
    ]
  }))
  t.same(block.last_commit, {
    height: 100,
    round: 2,
    block_id: { hash: '01'.repeat(32), parts: { total: 2, hash: '02'.repeat(32) } },
    signatures: [
      { block_id_flag: 2, validator_address: 'AB'.repeat(20), timestamp: '2026-01-15T10:00:00.5Z', signature: b64(Buffer.alloc(64, 1)) },
      { block_id_flag: 1, validator_address: '', timestamp: '0001-01-01T00:00:00Z', signature: null },
      { block_id_flag: 3, validator_address: 'AB'.repeat(20), timestamp: '2026-01-15T10:00:00.5Z', signature: b64(Buffer.alloc(64, 1)) }
    ]
  })
  t.same(cometBlockFromGateway(withCommit({ height: '0', round: 0, block_id: {}, signatures: [] })).last_commit,
    { height: 0, round: 0, block_id: { hash: '', parts: { total: 0, hash: '' } }, signatures: [] }, 'height 0: an empty commit is valid')
})

t.test('a last commit CometBFT refuses is an InvalidBlockError', async (t) => {
  const cases: Array<[string, Record<string, unknown>]> = [
    ['negative height', { height: '-1', round: 0, block_id: blockId, signatures: [commitSig({})] }],
    ['negative round', { height: '1', round: -1, block_id: blockId, signatures: [commitSig({})] }],
    ['nil block', { height: '1', round: 0, block_id: {}, signatures: [commitSig({})] }],
    ['no signatures', { height: '1', round: 0, block_id: blockId, signatures: [] }],
    ['unknown flag', { height: '1', round: 0, block_id: blockId, signatures: [commitSig({ block_id_flag: 'BLOCK_ID_FLAG_UNKNOWN' })] }],
    ['absent with an address', { height: '1', round: 0, block_id: blockId, signatures: [commitSig({ block_id_flag: 'BLOCK_ID_FLAG_ABSENT', timestamp: null, signature: '' })] }],
    ['absent with a time', { height: '1', round: 0, block_id: blockId, signatures: [commitSig({ block_id_flag: 'BLOCK_ID_FLAG_ABSENT', validator_address: '', signature: '' })] }],
    ['absent with a signature', { height: '1', round: 0, block_id: blockId, signatures: [commitSig({ block_id_flag: 'BLOCK_ID_FLAG_ABSENT', validator_address: '', timestamp: null })] }],
    ['short validator address', { height: '1', round: 0, block_id: blockId, signatures: [commitSig({ validator_address: b64(Buffer.alloc(8)) })] }],
    ['missing signature', { height: '1', round: 0, block_id: blockId, signatures: [commitSig({ signature: '' })] }],
    ['signature too big', { height: '1', round: 0, block_id: blockId, signatures: [commitSig({ signature: b64(Buffer.alloc(65)) })] }]
  ]
  for (const [name, commit] of cases) t.throws(() => cometBlockFromGateway(withCommit(commit)), InvalidBlockError, name)
})

const vote = (fields: Record<string, unknown> = {}): Record<string, unknown> => ({
  type: 'SIGNED_MSG_TYPE_PREVOTE',
  height: '99',
  round: 0,
  block_id: blockId,
  timestamp: '2026-01-15T10:00:00Z',
  validator_address: b64(ADDRESS),
  validator_index: 3,
  signature: b64(Buffer.alloc(64, 9)),
  extension: '',
  extension_signature: '',
  ...fields
})

t.test('evidence is written as the concrete Go struct: duplicate vote or light client attack', async (t) => {
  const validator = { address: b64(ADDRESS), pub_key: { ed25519: b64(Buffer.alloc(32, 5)) }, voting_power: '10', proposer_priority: '-2' }
  const block = cometBlockFromGateway({
    ...goldenStubBlock(),
    evidence: {
      evidence: [
        { duplicate_vote_evidence: { vote_a: vote(), vote_b: vote({ type: 2, block_id: {} }), total_voting_power: '100', validator_power: '10', timestamp: '2026-01-15T09:00:00Z' } },
        { duplicate_vote_evidence: { vote_a: null } },
        {
          light_client_attack_evidence: {
            conflicting_block: {
              signed_header: { header: { height: '98', version: { block: '11' } }, commit: { height: '98', round: 0, block_id: blockId, signatures: [commitSig({})] } },
              validator_set: { validators: [validator], proposer: { ...validator, pub_key: { secp256k1: b64(Buffer.alloc(33, 6)) } } }
            },
            common_height: '97',
            byzantine_validators: [validator],
            total_voting_power: '100',
            timestamp: '2026-01-15T08:00:00Z'
          }
        },
        { light_client_attack_evidence: { conflicting_block: { signed_header: {}, validator_set: {} } } },
        { light_client_attack_evidence: { conflicting_block: null } },
        { light_client_attack_evidence: { conflicting_block: { signed_header: null } } }
      ]
    }
  })
  const [duplicate, sparseDuplicate, attack, sparseAttack, noBlock, nullParts] = block.evidence.evidence
  t.same(duplicate, {
    vote_a: {
      type: 1,
      height: 99,
      round: 0,
      block_id: { hash: '01'.repeat(32), parts: { total: 2, hash: '02'.repeat(32) } },
      timestamp: '2026-01-15T10:00:00Z',
      validator_address: 'AB'.repeat(20),
      validator_index: 3,
      signature: b64(Buffer.alloc(64, 9)),
      extension: null,
      extension_signature: null
    },
    vote_b: { ...duplicate?.vote_a, type: 2, block_id: { hash: '', parts: { total: 0, hash: '' } } },
    TotalVotingPower: 100,
    ValidatorPower: 10,
    Timestamp: '2026-01-15T09:00:00Z'
  })
  t.same(Object.keys(duplicate ?? {}), ['vote_a', 'vote_b', 'TotalVotingPower', 'ValidatorPower', 'Timestamp'])
  t.same(sparseDuplicate, { vote_a: null, vote_b: null, TotalVotingPower: 0, ValidatorPower: 0, Timestamp: '0001-01-01T00:00:00Z' })
  const goValidator = { address: 'AB'.repeat(20), pub_key: b64(Buffer.alloc(32, 5)), voting_power: 10, proposer_priority: -2 }
  t.same(attack, {
    conflicting_block: {
      signed_header: {
        header: {
          version: { block: 11 },
          chain_id: '',
          height: 98,
          time: '0001-01-01T00:00:00Z',
          last_block_id: { hash: '', parts: { total: 0, hash: '' } },
          last_commit_hash: '',
          data_hash: '',
          validators_hash: '',
          next_validators_hash: '',
          consensus_hash: '',
          app_hash: '',
          last_results_hash: '',
          evidence_hash: '',
          proposer_address: ''
        },
        commit: { height: 98, round: 0, block_id: { hash: '01'.repeat(32), parts: { total: 2, hash: '02'.repeat(32) } }, signatures: [{ block_id_flag: 2, validator_address: 'AB'.repeat(20), timestamp: '2026-01-15T10:00:00.5Z', signature: b64(Buffer.alloc(64, 1)) }] }
      },
      validator_set: { validators: [goValidator], proposer: { ...goValidator, pub_key: b64(Buffer.alloc(33, 6)) } }
    },
    common_height: 97,
    ByzantineValidators: [goValidator],
    TotalVotingPower: 100,
    Timestamp: '2026-01-15T08:00:00Z'
  })
  t.same(sparseAttack?.conflicting_block, { signed_header: { header: null, commit: null }, validator_set: { validators: [], proposer: null } })
  t.same(noBlock?.conflicting_block, null)
  t.same(nullParts?.conflicting_block, { signed_header: null, validator_set: null })
  t.throws(() => cometBlockFromGateway({ ...goldenStubBlock(), evidence: { evidence: [{}] } }), InvalidBlockError, 'an unknown kind of evidence')
})

t.test('proof ops: ProofOp fields are omitempty, a nil ops list is null', async (t) => {
  t.same(cometProofOpsFromGateway({ ops: [{ type: 'iavl:v', key: b64('key'), data: b64('value') }] }),
    { ops: [{ type: 'iavl:v', key: 'a2V5', data: 'dmFsdWU=' }] }, 'the Go golden file\'s proof_ops')
  t.same(cometProofOpsFromGateway({ ops: [{ type: '', key: '', data: null }, { type: 7 }] }), { ops: [{}, {}] })
  t.same(cometProofOpsFromGateway({}), { ops: null })
  t.same(cometProofOpsFromGateway('nonsense'), { ops: null })
})
