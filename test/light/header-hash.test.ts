import { createHash } from 'node:crypto'
import t from 'tap'
import { parseTimestamp, ZERO_TIME } from '../../src/cometbft/timestamp.js'
import type { Header } from '../../src/cometbft/types.js'
import { headerFieldBytes, headerHash, timestampBytes } from '../../src/light/header-hash.js'
import { singleStepCases } from '../fixtures/light/vectors.js'

const sum = (text: string): Buffer => createHash('sha256').update(text).digest()
const hex = (bytes: Uint8Array | undefined): string => Buffer.from(bytes ?? []).toString('hex').toUpperCase()

// CometBFT's TestHeaderHash "Generates expected hash" (types/block_test.go), field for field.
const COMETBFT_HEADER: Header = {
  version: { block: 1n, app: 2n },
  chainId: 'chainId',
  height: 3n,
  time: parseTimestamp('2019-10-13T16:14:44Z') as Header['time'],
  lastBlockId: { hash: new Uint8Array(32), partSetHeader: { total: 6, hash: new Uint8Array(32) } },
  lastCommitHash: sum('last_commit_hash'),
  dataHash: sum('data_hash'),
  validatorsHash: sum('validators_hash'),
  nextValidatorsHash: sum('next_validators_hash'),
  consensusHash: sum('consensus_hash'),
  appHash: sum('app_hash'),
  lastResultsHash: sum('last_results_hash'),
  evidenceHash: sum('evidence_hash'),
  proposerAddress: sum('proposer_address').subarray(0, 20)
}

t.test('CometBFT\'s TestHeaderHash vector', async (t) => {
  t.equal(hex(headerHash(COMETBFT_HEADER)), 'F740121F553B5418C3EFBD343C2DBFE9E007BB67B0D020A0741374BAB65242A4')
  t.equal(headerHash({ ...COMETBFT_HEADER, validatorsHash: new Uint8Array() }), undefined, 'no validators hash: no hash (Go\'s nil)')
})

t.test('every header of the tendermint-rs vectors hashes to the block ID its commit signs', async (t) => {
  let headers = 0
  for (const c of singleStepCases()) {
    for (const signed of [c.initial, ...c.steps.map((s) => s.block.signedHeader)]) {
      t.equal(hex(headerHash(signed.header)), hex(signed.commit.blockId.hash), `${c.name} height ${signed.header.height}`)
      headers++
    }
  }
  t.ok(headers >= 40, `${headers} headers`)
})

t.test('each of the fourteen fields is in the hash: changing any one changes it', async (t) => {
  const flip = (bytes: Uint8Array): Uint8Array => Uint8Array.from(bytes, (b, i) => i === 0 ? b ^ 1 : b)
  const changed: Record<keyof Header, Header> = {
    version: { ...COMETBFT_HEADER, version: { block: 1n, app: 3n } },
    chainId: { ...COMETBFT_HEADER, chainId: 'chainIe' },
    height: { ...COMETBFT_HEADER, height: 4n },
    time: { ...COMETBFT_HEADER, time: { ...COMETBFT_HEADER.time, nanos: 1 } },
    lastBlockId: { ...COMETBFT_HEADER, lastBlockId: { ...COMETBFT_HEADER.lastBlockId, partSetHeader: { total: 7, hash: new Uint8Array(32) } } },
    lastCommitHash: { ...COMETBFT_HEADER, lastCommitHash: flip(COMETBFT_HEADER.lastCommitHash) },
    dataHash: { ...COMETBFT_HEADER, dataHash: flip(COMETBFT_HEADER.dataHash) },
    validatorsHash: { ...COMETBFT_HEADER, validatorsHash: flip(COMETBFT_HEADER.validatorsHash) },
    nextValidatorsHash: { ...COMETBFT_HEADER, nextValidatorsHash: flip(COMETBFT_HEADER.nextValidatorsHash) },
    consensusHash: { ...COMETBFT_HEADER, consensusHash: flip(COMETBFT_HEADER.consensusHash) },
    appHash: { ...COMETBFT_HEADER, appHash: flip(COMETBFT_HEADER.appHash) },
    lastResultsHash: { ...COMETBFT_HEADER, lastResultsHash: flip(COMETBFT_HEADER.lastResultsHash) },
    evidenceHash: { ...COMETBFT_HEADER, evidenceHash: flip(COMETBFT_HEADER.evidenceHash) },
    proposerAddress: { ...COMETBFT_HEADER, proposerAddress: flip(COMETBFT_HEADER.proposerAddress) }
  }
  t.equal(Object.keys(changed).length, 14)
  const original = hex(headerHash(COMETBFT_HEADER))
  for (const [field, header] of Object.entries(changed)) t.not(hex(headerHash(header)), original, field)
  // Two fields swapped: each leaf is at its own place.
  t.not(hex(headerHash({ ...COMETBFT_HEADER, dataHash: COMETBFT_HEADER.lastCommitHash, lastCommitHash: COMETBFT_HEADER.dataHash })), original, 'order')
})

t.test('zero values are empty leaves, as Go\'s cdcEncode and gogoproto write them; an empty BlockID keeps its part set header', async (t) => {
  const empty = new Uint8Array()
  const zero: Header = {
    version: { block: 0n, app: 0n },
    chainId: '',
    height: 0n,
    time: { seconds: 0, nanos: 0 },
    lastBlockId: { hash: empty, partSetHeader: { total: 0, hash: empty } },
    lastCommitHash: empty,
    dataHash: empty,
    validatorsHash: empty,
    nextValidatorsHash: empty,
    consensusHash: empty,
    appHash: empty,
    lastResultsHash: empty,
    evidenceHash: empty,
    proposerAddress: empty
  }
  t.same(headerFieldBytes(zero).map((b) => Buffer.from(b).toString('hex')), ['', '', '', '', '1200', '', '', '', '', '', '', '', '', ''])
  const fields = headerFieldBytes({ ...zero, version: { block: 11n, app: 1n }, chainId: 'c', height: 300n, proposerAddress: Uint8Array.of(0xab) })
  t.same(fields.slice(0, 3).map((b) => Buffer.from(b).toString('hex')), ['080b1001', '0a0163', '08ac02'], 'Consensus, StringValue, Int64Value')
  t.equal(Buffer.from(fields[13] as Uint8Array).toString('hex'), '0a01ab', 'BytesValue')
})

t.test('a time is a google.protobuf.Timestamp, before 1970 as a negative int64', async (t) => {
  t.equal(Buffer.from(timestampBytes({ seconds: 1, nanos: 5 })).toString('hex'), '08011005')
  // Go's zero time: seconds -62135596800 as a ten-byte two's complement varint.
  t.equal(Buffer.from(timestampBytes(ZERO_TIME)).toString('hex'), '088092b8c398feffffff01')
})
