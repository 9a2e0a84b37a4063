import t from 'tap'
import { z } from 'zod'
import { parseJson, RawNumber, type Json } from '../../scripts/compat/json.js'
import { startEdgeApiForClients, type EdgeApiForClients } from '../fixtures/clients/edge-api.js'
import { ACTIVE_PARTICIPANTS, CURRENT_EPOCH, encodeActiveParticipants } from '../../harness/chain-simulator/data/epochs.js'

// NosytLabs/Gonkastats (Next.js dashboard), as it reads edge-api. Its answers are checked with
// zod 4 (package.json pins zod 4.6.5, as here), so the schemas below are its contracts
// restated with the same library and version, field by field:
// - src/core/http.ts@236b308f91ad3b1b183a32fda80201e9396589e7 readJSON: accept json, its
//   user-agent, redirect 'error', non-OK → error, a content-type without "json" → error, at most
//   2,000,000 bytes, then parseExact.
// - src/core/metrics.ts@9f3c2a448acdfeabe341a26a750a7fa45ba43c9a parseExact: lossless-json with
//   the number parser (v) => v, so every JSON number arrives as its text, a string.
// - src/core/normalize.ts@9f3c2a448acdfeabe341a26a750a7fa45ba43c9a: scalar, integer, record,
//   epochData, participantData, networkModelIds, governanceModelData, versionsData.
// - src/core/collect.ts@0b21ae7aeba0fb00846bf1881309485d31281068: which route feeds which schema,
//   and the participants of /v1/epochs/{latest_epoch.index}/participants.

const USER_AGENT = 'GonkaStats/0.1 (read-only analytics)'
const LIMIT = 2_000_000

/** readJSON + parseExact: numbers as their source text. */
async function readJson (edge: EdgeApiForClients, path: string): Promise<unknown> {
  const res = await edge.get(path, { accept: 'application/json', 'user-agent': USER_AGENT })
  if (res.status < 200 || res.status > 299) throw new Error(`Upstream HTTP ${res.status}`)
  if (!res.contentType.includes('json')) throw new Error('Upstream did not return JSON')
  if (Buffer.byteLength(res.text) > LIMIT) throw new Error('Response exceeds size limit')
  return numbersAsText(parseJson(res.text))
}

function numbersAsText (value: Json): unknown {
  if (value instanceof RawNumber) return value.text
  if (Array.isArray(value)) return value.map(numbersAsText)
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, numbersAsText(v)]))
  return value
}

// normalize.ts: a number or numeric text as a string; a safe non-negative integer; any object.
const scalar = z.union([z.string(), z.number()]).transform(String)
const integer = scalar.transform(Number).refine((n) => Number.isSafeInteger(n) && n >= 0)
const record = z.record(z.string(), z.unknown())

/** epochData: the latest epoch, its interval and the stage boundaries it draws. */
function epochData (data: unknown): { id: number, height: number, phase: string, boundaries: number[] } {
  const d = z.object({ block_height: integer, latest_epoch: z.object({ index: integer }), phase: z.string(), epoch_stages: record }).parse(data)
  const stages = d.epoch_stages
  const start = integer.parse(stages.poc_start)
  const end = integer.parse(stages.next_poc_start)
  if (end <= start) throw new Error('Invalid epoch interval')
  const boundaries = ['poc_start', 'poc_validation_start', 'poc_validation_end', 'set_new_validators', 'next_poc_start'].map((key) => integer.parse(stages[key]))
  return { id: d.latest_epoch.index, height: d.block_height, phase: d.phase, boundaries }
}

interface Participant { address: string, weight: string, models: string[], nodes: number | null, excluded: boolean }

/** participantData: every participant, its ML-node count (null: the source gave none) and exclusion. */
function participantData (data: unknown): Participant[] {
  const d = z.object({
    active_participants: z.object({
      participants: z.array(z.object({
        index: z.string(),
        weight: scalar.refine((v) => /^\d{1,80}$/.test(v), 'Expected unsigned integer weight'),
        models: z.array(z.string()).default([]),
        ml_nodes: z.array(record).optional()
      }))
    }),
    excluded_participants: z.array(z.object({ address: z.string(), reason: z.string().optional() })).default([])
  }).parse(data)
  const excluded = new Set(d.excluded_participants.map((x) => x.address))
  return d.active_participants.participants.map((p) => {
    const ids = new Set<string>()
    for (const group of p.ml_nodes ?? []) {
      for (const node of Array.isArray(group.ml_nodes) ? group.ml_nodes : []) {
        const n = record.parse(node)
        if (typeof n.node_id === 'string') ids.add(n.node_id)
      }
    }
    return { address: p.index, weight: p.weight, models: p.models, nodes: p.ml_nodes === undefined ? null : ids.size, excluded: excluded.has(p.index) }
  })
}

const networkModelIds = (data: unknown): string[] => z.object({ data: z.array(z.object({ id: z.string() })) }).parse(data).data.map((x) => x.id)

const governanceModelIds = (data: unknown): string[] =>
  z.object({ models: z.array(record) }).parse(data).models.map((m) => z.string().parse(m.id))

/** versionsData: the answer flattened to dotted keys with string values. */
function versionsData (data: unknown): Record<string, string> {
  const out: Record<string, string> = {}
  const visit = (prefix: string, value: unknown): void => {
    if (['string', 'number', 'boolean'].includes(typeof value)) {
      if (prefix !== '') out[prefix] = String(value)
      return
    }
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      for (const [key, child] of Object.entries(value)) visit(prefix === '' ? key : `${prefix}.${key}`, child)
    }
  }
  visit('', record.parse(data))
  return out
}

t.test('collect(): the epoch, its participants, the models, the governance models and the versions all parse', async (t) => {
  const edge = await startEdgeApiForClients(t)
  const epoch = epochData(await readJson(edge, '/v1/epochs/latest'))
  t.equal(epoch.id, CURRENT_EPOCH)
  t.equal(epoch.phase, 'Inference')
  t.equal(epoch.boundaries.length, 5)

  const third = ACTIVE_PARTICIPANTS.participants[2]?.index as string
  edge.sim.override(`/productscience/inference/inference/excluded_participants/${CURRENT_EPOCH}`, { items: [{ address: third, reason: 'downtime', exclusion_block_height: '1843120' }] })
  const participants = participantData(await readJson(edge, `/v1/epochs/${epoch.id}/participants`))
  t.same(participants.map((p) => p.address), ACTIVE_PARTICIPANTS.participants.map((p) => p.index))
  t.same(participants.map((p) => p.weight), ['1250', '980', '410'], 'weights as exact decimal text')
  t.same(participants.map((p) => p.nodes), [2, 1, 0], 'a participant without ML nodes has 0 nodes, not an unknown count')
  t.same(participants[2]?.models, [])
  t.same(participants.map((p) => p.excluded), [false, false, true], 'excluded_participants joined by address')

  t.same(networkModelIds(await readJson(edge, '/v1/models')), ['Qwen/Qwen3-235B-A22B-Instruct-2507-FP8', 'Qwen/QwQ-32B', 'gonka/inference-test-8b'])
  t.equal(governanceModelIds(await readJson(edge, '/v1/governance/models')).length, 3)
  const versions = versionsData(await readJson(edge, '/v1/versions'))
  t.match(versions.timestamp, /^\d{4}-\d\d-\d\dT/, 'versions.sourceTime: a timestamp string')
  t.equal(versions['api_version.application_name'], 'edge-api')
})

t.test('a chain without governance models: models is an array, so the source stays available', async (t) => {
  const edge = await startEdgeApiForClients(t)
  edge.sim.override('/productscience/inference/inference/models_all', { model: [], pagination: { next_key: null, total: '0' } })
  t.same(governanceModelIds(await readJson(edge, '/v1/governance/models')), [])
})

t.test('an epoch without participants: participants is an array, so the membership parses', async (t) => {
  const edge = await startEdgeApiForClients(t)
  const empty = { ...ACTIVE_PARTICIPANTS, participants: [], created_at_block_height: 0n }
  edge.sim.override('/cosmos/base/tendermint/v1beta1/abci_query', { code: 0, value: Buffer.from(encodeActiveParticipants(empty)).toString('base64') })
  t.same(participantData(await readJson(edge, `/v1/epochs/${CURRENT_EPOCH}/participants`)), [])
})

t.test('the schemas reject what Gonkastats rejects', async (t) => {
  t.throws(() => governanceModelIds({ models: null }), z.ZodError, 'Go\'s {"models": null}')
  t.throws(() => participantData({ active_participants: {} }), z.ZodError, 'participants left out')
  t.throws(() => participantData({ active_participants: { participants: [{ index: 'a', weight: '1', models: null }] } }), z.ZodError, 'models: null')
  t.throws(() => participantData({ active_participants: { participants: [{ index: 'a' }] } }), z.ZodError, 'a participant without weight')
  t.throws(() => epochData({ block_height: '1', latest_epoch: { index: '1' }, phase: 3, epoch_stages: {} }), z.ZodError, 'phase as a number')
  t.throws(() => epochData({ block_height: '1', latest_epoch: { index: '1' }, phase: 'Inference', epoch_stages: { poc_start: '5', next_poc_start: '5' } }), /Invalid epoch interval/)
  t.throws(() => networkModelIds({ object: 'list' }), z.ZodError, '/v1/models without data')
})
