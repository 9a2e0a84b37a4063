import t from 'tap'
import { startEdgeApiForClients, type EdgeApiForClients } from '../fixtures/clients/edge-api.js'
import { ACTIVE_PARTICIPANTS } from '../../harness/chain-simulator/data/epochs.js'
import { go, GoUnmarshalError, unmarshal, type GoType, type GoValue } from '../fixtures/clients/go-json.js'
import { get, item, iter, loads, PyError, type PyValue } from '../fixtures/clients/python.js'
import type { Json } from '../../scripts/compat/json.js'

// The gonka-openai SDKs' endpoint discovery: each asks a source for the current epoch's
// participants and turns them into inference endpoints, leaving out the excluded ones.
// gonka-ai/gonka-openai@e27a91d2567ce5e5af7d5a4de5df2c5e9dce878d
// - TypeScript: typescript/src/utils.ts L46-50 ensureV1, L94-103 getParticipantsWithProof,
//   L189-224 getParticipantsWithProofFromPayload (verify mode: fromHex of the bytes and the app
//   hash, exactly two proof ops with base64 key and data).
// - Python: python/src/gonka_openai/get_participants_with_proof.py L44-51, L62-83
//   _process_payload (payload["excluded_participants"] without a guard).
// - Go: go/get_participants_with_proof.go L24-128 (status ≠ 200 → error; excluded decoded
//   separately, its error ignored; light mode json.Unmarshal into the typed ActiveParticipants,
//   any error fails the call; verify mode into ActiveParticipantWithProof), go/entities.go L8-52.

const CONTENT_TYPE = { 'Content-Type': 'application/json' }
const expected = ACTIVE_PARTICIPANTS.participants.map((p) => ({ url: `${p.inference_url}/v1`, address: p.index }))

/** TypeScript SDK (light mode, GONKA_VERIFY_PROOF unset). */
async function typescriptSdk (edge: EdgeApiForClients): Promise<Array<{ url: string, address: string }>> {
  const res = await edge.get('/v1/epochs/current/participants', CONTENT_TYPE)
  if (res.status < 200 || res.status > 299) throw new Error(`failed to fetch participants: ${res.status}`)
  const payload = JSON.parse(res.text)
  const excluded = new Set((payload?.excluded_participants ?? []).map((p: { address: string }) => p.address))
  const endpoints = []
  for (const p of payload?.active_participants?.participants ?? []) {
    if (p?.inference_url && p?.index && !excluded.has(p.index)) {
      const noTrail = p.inference_url.endsWith('/') ? p.inference_url.slice(0, -1) : p.inference_url
      endpoints.push({ url: noTrail.endsWith('/v1') ? noTrail : `${noTrail}/v1`, address: p.index })
    }
  }
  return endpoints
}

/** TypeScript SDK, verify mode (GONKA_VERIFY_PROOF=1): the inputs it decodes before verifyIcs23. */
function typescriptVerifyInputs (payload: Record<string, any>): { value: Uint8Array, ops: number, appHash: Uint8Array } {
  const fromHex = (hex: string): Uint8Array => {
    const clean = hex.trim().toLowerCase()
    if (!/^[0-9a-f]+$/.test(clean) || clean.length % 2 !== 0) throw new Error('invalid hex')
    return Uint8Array.from(Buffer.from(clean, 'hex'))
  }
  if (!payload?.active_participants_bytes) throw new Error('missing active_participants_bytes')
  const value = fromHex(payload.active_participants_bytes)
  const ops = payload?.proof_ops?.ops ?? []
  if (!Array.isArray(ops) || ops.length !== 2) throw new Error('expected 2 proof ops')
  for (const op of ops) Buffer.from(op?.key ?? '', 'base64')
  const appHashHex = payload?.block?.app_hash || payload?.block?.header?.app_hash
  if (!appHashHex) throw new Error('missing app_hash')
  return { value, ops: ops.length, appHash: fromHex(appHashHex) }
}

/** Python SDK, _process_payload in light mode. */
async function pythonSdk (edge: EdgeApiForClients): Promise<Array<{ url: string, address: string }>> {
  const res = await edge.get('/v1/epochs/current/participants', CONTENT_TYPE)
  if (res.status !== 200) throw new PyError(`RuntimeError: failed to fetch participants with proof: status code ${res.status}`)
  const payload = loads(res.text)
  const excluded = new Set(iter(item(payload, 'excluded_participants')).map((p) => item(p, 'address')))
  const endpoints = []
  for (const p of iter(get(get(payload ?? {}, 'active_participants', {}), 'participants', []))) {
    const url = get(p ?? {}, 'inference_url') as string | null
    const addr = get(p ?? {}, 'index') as string | null
    if (url === null || url === '' || addr === null || addr === '' || excluded.has(addr)) continue
    const u = url.endsWith('/') ? url.slice(0, -1) : url
    endpoints.push({ url: u.endsWith('/v1') ? u : `${u}/v1`, address: addr })
  }
  return endpoints
}

// go/entities.go: the structs the Go SDK decodes into.
const RandomSeed = go.struct('RandomSeed', { participant: go.string, block_height: go.int64, signature: go.string })
const ActiveParticipant = go.struct('ActiveParticipant', {
  index: go.string, validator_key: go.string, weight: go.int64, inference_url: go.string, models: go.slice(go.string), seed: go.pointer(RandomSeed)
})
const ActiveParticipants = go.struct('ActiveParticipants', {
  participants: go.slice(go.pointer(ActiveParticipant)),
  epoch_group_id: go.uint64,
  poc_start_block_height: go.int64,
  effective_block_height: go.int64,
  created_at_block_height: go.int64,
  epoch_id: go.uint64
})
const ExcludedParticipants = go.struct('', { excluded_participants: go.slice(go.struct('ExcludedParticipant', { address: go.string })) })
/** cometbft libs/bytes.HexBytes.UnmarshalJSON: a JSON string of hex. */
const HexBytes: GoType = {
  kind: 'unmarshaler',
  name: 'HexBytes',
  unmarshal: (raw: Json) => {
    if (raw === null) return null
    if (typeof raw !== 'string' || !/^(?:[0-9a-fA-F]{2})*$/.test(raw)) throw new GoUnmarshalError('json: HexBytes: invalid hex string')
    return raw
  }
}
// Verify mode: ActiveParticipantWithProof, with the parts of comettypes.Block the SDK reads
// (the header's height and app hash) and the proof ops ([]byte is base64 in encoding/json).
const ActiveParticipantWithProof = go.struct('ActiveParticipantWithProof', {
  active_participants: ActiveParticipants,
  addresses: go.slice(go.string),
  active_participants_bytes: go.string,
  proof_ops: go.pointer(go.struct('ProofOps', { ops: go.slice(go.struct('ProofOp', { type: go.string, key: go.string, data: go.string })) })),
  validators: go.slice(go.pointer(go.struct('Validator', { address: go.string, pub_key: go.string, voting_power: go.int64, proposer_priority: go.int64 }))),
  block: go.pointer(go.struct('Block', { header: go.struct('Header', { height: go.int64, app_hash: HexBytes }) })),
  excluded_participants: go.slice(go.struct('ExcludedParticipant', { address: go.string }))
})

type Struct = Record<string, GoValue>

/** Go SDK, GetParticipantsWithProof. */
async function goSdk (edge: EdgeApiForClients, verify: boolean): Promise<Array<{ url: string, address: string }>> {
  const res = await edge.get('/v1/epochs/current/participants', CONTENT_TYPE)
  if (res.status !== 200) throw new Error(`failed to fetch participants with proof: status code ${res.status}`)
  let excluded: GoValue[] = []
  try {
    excluded = ((unmarshal(res.text, ExcludedParticipants) as Struct).excluded_participants as GoValue[] | null) ?? []
  } catch {} // `_ = json.Unmarshal(bodyBytes, &excludedRaw)`
  const excludedSet = new Set(excluded.map((e) => (e as Struct).address))
  const decoded = unmarshal(res.text, verify ? ActiveParticipantWithProof : go.struct('', { active_participants: ActiveParticipants })) as Struct
  if (verify) {
    const block = decoded.block as Struct | null
    if (block === null || decoded.proof_ops === null) throw new Error('missing block/proof in response while verification is enabled')
    Buffer.from(decoded.active_participants_bytes as string, 'hex')
  }
  const participants = ((decoded.active_participants as Struct).participants as Struct[] | null) ?? []
  return participants.filter((p) => !excludedSet.has(p.index)).map((p) => ({ url: `${p.inference_url as string}/v1`, address: p.index as string }))
}

t.test('each SDK discovers one endpoint per participant, without the excluded ones', async (t) => {
  const edge = await startEdgeApiForClients(t)
  t.same(await typescriptSdk(edge), expected, 'TypeScript')
  t.same(await pythonSdk(edge), expected, 'Python')
  t.same(await goSdk(edge, false), expected, 'Go, light decode: every integer a JSON number in range')
  t.same(await goSdk(edge, true), expected, 'Go, verify-mode decode: validators, proof ops and the block header decode too')

  edge.sim.override('/productscience/inference/inference/excluded_participants/42', { items: [{ address: expected[0]?.address, reason: 'downtime', exclusion_block_height: '1843120' }] })
  const withoutFirst = expected.slice(1)
  t.same(await typescriptSdk(edge), withoutFirst)
  t.same(await pythonSdk(edge), withoutFirst)
  t.same(await goSdk(edge, false), withoutFirst)
})

t.test('verify mode: hex bytes, two base64 proof ops and a hex app hash, as the TypeScript SDK decodes them', async (t) => {
  const edge = await startEdgeApiForClients(t)
  const inputs = typescriptVerifyInputs(JSON.parse((await edge.get('/v1/epochs/current/participants', CONTENT_TYPE)).text))
  t.ok(inputs.value.length > 0)
  t.equal(inputs.ops, 2)
  t.equal(inputs.appHash.length, 32, 'block.header.app_hash: the 32-byte app hash in hex')
})

t.test('the SDK decodes this test relies on fail where the SDKs fail', async (t) => {
  t.throws(() => unmarshal('{"active_participants":{"epoch_group_id":"42"}}', go.struct('', { active_participants: ActiveParticipants })),
    /cannot unmarshal string into Go struct field \.active_participants\.epoch_group_id of type uint64/, 'a 64-bit integer as a string fails the Go SDK')
  t.throws(() => unmarshal('{"block":{"header":{"app_hash":"z9"}}}', ActiveParticipantWithProof), /HexBytes/, 'a base64 app hash fails its verify mode')
  t.throws(() => typescriptVerifyInputs({ active_participants_bytes: 'zz' }), /invalid hex/)
  t.throws(() => typescriptVerifyInputs({ active_participants_bytes: '00', proof_ops: { ops: [] } }), /expected 2 proof ops/)
  t.throws(() => typescriptVerifyInputs({ active_participants_bytes: '00', proof_ops: { ops: [{}, {}] } }), /missing app_hash/)
  t.throws(() => typescriptVerifyInputs({}), /missing active_participants_bytes/)
  const py = (payload: PyValue): unknown => iter(item(payload, 'excluded_participants'))
  t.throws(() => py({}), /KeyError: 'excluded_participants'/, 'the Python SDK needs excluded_participants present')
  t.throws(() => py({ excluded_participants: null }), /TypeError: 'NoneType' object is not iterable/, '… and a list')
})
