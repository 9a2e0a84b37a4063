import type { AddressInfo } from 'node:net'
import { readFileSync } from 'node:fs'
import t from 'tap'
import { buildTestApp } from '../fixtures/app.js'
import { CHAIN_DIFFERENCES, type ChainDifference } from '../../src/wire/chain-differences.js'
import { CHAIN_MESSAGES, CHAIN_VERSION, type ChainField, type ChainMessage } from '../../src/wire/chain-version.js'
import { CHAIN_MESSAGE_KEY } from '../../src/wire/schema.js'

// The chain version as a checked fact: every field of every chain message the manifest lists
// is served, as Go's compiled struct writes it, by a schema that names that message in the
// OpenAPI document the app serves — or is a deliberate difference with its reason. The
// document is read from a listening app, so this checks what clients are told and sent.

interface Schema {
  readonly type?: string
  readonly format?: string
  readonly properties?: Record<string, Schema>
  readonly items?: Schema
  readonly [key: string]: unknown
}

/** Every schema of `doc` that names its chain message, by message name. */
function servedMessages (doc: unknown, found = new Map<string, Schema[]>()): Map<string, Schema[]> {
  if (Array.isArray(doc)) for (const item of doc) servedMessages(item, found)
  else if (doc !== null && typeof doc === 'object') {
    const name = (doc as Schema)[CHAIN_MESSAGE_KEY]
    if (typeof name === 'string') found.set(name, [...found.get(name) ?? [], doc as Schema])
    for (const value of Object.values(doc)) servedMessages(value, found)
  }
  return found
}

const SCALARS: Readonly<Record<string, { type: string, format?: string }>> = {
  int64: { type: 'integer', format: 'int64' },
  sint64: { type: 'integer', format: 'int64' },
  sfixed64: { type: 'integer', format: 'int64' },
  uint64: { type: 'integer', format: 'uint64' },
  fixed64: { type: 'integer', format: 'uint64' },
  int32: { type: 'integer', format: 'int32' },
  sint32: { type: 'integer', format: 'int32' },
  sfixed32: { type: 'integer', format: 'int32' },
  uint32: { type: 'integer', format: 'uint32' },
  fixed32: { type: 'integer', format: 'uint32' },
  bool: { type: 'boolean' },
  string: { type: 'string' },
  bytes: { type: 'string' },
  double: { type: 'number' },
  float: { type: 'number' }
}

const shape = (schema: Schema): string => `${schema.type ?? 'untyped'}${schema.format === undefined ? '' : ` ${schema.format}`}`

/** How `schema` fails to serve `field` as Go writes it; 'enum-as-number' for an enum served as its number. */
function typeProblem (field: ChainField, schema: Schema): string | undefined {
  if (field.repeated === true) {
    if (schema.type !== 'array' || schema.items === undefined) return `served as ${shape(schema)}, not a list`
    return typeProblem({ ...field, repeated: undefined }, schema.items)
  }
  if (field.enum === true) {
    if (schema['x-api-number-enum'] !== undefined) return 'enum-as-number'
    const byName = schema.type === 'string' && schema['x-api-enum'] === true
    return byName || (schema.type === 'integer' && schema['x-proto-enum'] !== undefined) ? undefined : `served as ${shape(schema)}, not the enum ${field.type}`
  }
  const scalar = SCALARS[field.type]
  if (scalar !== undefined) {
    return schema.type === scalar.type && (scalar.format === undefined || schema.format === scalar.format) ? undefined : `served as ${shape(schema)}, not ${field.type}`
  }
  return schema[CHAIN_MESSAGE_KEY] === field.type ? undefined : `served as ${shape(schema)}, not the message ${field.type}`
}

const describe = (field: ChainField): string => `field ${field.number}, ${field.repeated === true ? 'repeated ' : ''}${field.type}`

/** Every disagreement between the manifest, the schemas served and the deliberate differences. */
function fieldProblems (messages: readonly ChainMessage[], served: ReadonlyMap<string, Schema[]>, differences: readonly ChainDifference[]): string[] {
  const problems = new Set<string>()
  const used = new Set<ChainDifference>()
  const listed = (message: string, field: string, kind: ChainDifference['kind']): boolean => {
    const difference = differences.find((d) => d.message === message && d.field === field && d.kind === kind)
    if (difference !== undefined) used.add(difference)
    return difference !== undefined
  }
  for (const message of messages) {
    const schemas = served.get(message.name) ?? []
    if (schemas.length === 0) problems.add(`${message.name}: no schema served names it (${CHAIN_MESSAGE_KEY})`)
    for (const schema of schemas) {
      const properties = schema.properties ?? {}
      for (const field of message.fields) {
        const at = `${message.name}.${field.name} (${describe(field)})`
        const property = properties[field.name]
        const problem = property === undefined ? 'not-served' : typeProblem(field, property)
        if (problem === 'not-served' && !listed(message.name, field.name, problem)) problems.add(`${at}: not in the schema served, nor a deliberate difference`)
        else if (problem === 'enum-as-number' && !listed(message.name, field.name, problem)) problems.add(`${at}: served as its number, Go writes the name; not a deliberate difference`)
        else if (problem !== undefined && problem !== 'not-served' && problem !== 'enum-as-number') problems.add(`${at}: ${problem}`)
      }
      for (const key of Object.keys(properties)) {
        if (!message.fields.some((f) => f.name === key) && !listed(message.name, key, 'not-in-chain')) {
          problems.add(`${message.name}.${key}: served, but ${CHAIN_VERSION.version}'s message has no such field, nor is it a deliberate difference`)
        }
      }
    }
  }
  for (const d of differences) if (!used.has(d)) problems.add(`deliberate difference ${d.message}.${d.field} (${d.kind}): not found any more; remove it`)
  return [...problems]
}

const { app } = await buildTestApp(t)
await app.listen({ host: '127.0.0.1', port: 0 })
const res = await fetch(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}/openapi.json`)
const document: unknown = await res.json()
const served = servedMessages(document)

/** The document with one property of one message's schemas removed. */
function withoutField (message: string, field: string): Map<string, Schema[]> {
  const copy = servedMessages(structuredClone(document))
  for (const schema of copy.get(message) ?? []) delete (schema.properties as Record<string, Schema>)[field]
  return copy
}

t.test('every field of the chain version\'s messages is served as Go writes it, or is a deliberate difference', async (t) => {
  t.equal(res.status, 200)
  t.same(fieldProblems(CHAIN_MESSAGES, served, CHAIN_DIFFERENCES), [])
  t.same([...served.keys()].sort(), CHAIN_MESSAGES.map((m) => m.name).sort(), 'each message has a schema that names it, and only these')
})

t.test('removing any of issue 43\'s six fields from a schema fails, naming the message and the field', async (t) => {
  const six = [
    ['inference.inference.EpochParams', 'confirmation_poc_safety_window', 'field 15, int64'],
    ['inference.bls.EpochBLSData', 'slot_public_keys', 'field 13, repeated bytes'],
    ['inference.bls.BLSParticipantInfo', 'allowed_secp256k1_public_keys', 'field 6, repeated bytes'],
    ['inference.bls.DealerComplaint', 'response_submitted', 'field 5, bool'],
    ['inference.bls.DealerComplaint', 'response_share_bytes', 'field 6, bytes'],
    ['inference.bls.DealerComplaint', 'response_opening_material', 'field 7, bytes'],
    ['inference.bls.ThresholdSigningRequest', 'attempt', 'field 12, uint32']
  ] as const
  for (const [message, field, what] of six) {
    t.same(fieldProblems(CHAIN_MESSAGES, withoutField(message, field), CHAIN_DIFFERENCES),
      [`${message}.${field} (${what}): not in the schema served, nor a deliberate difference`], `${message}.${field}`)
  }
  t.same(fieldProblems(CHAIN_MESSAGES, withoutField('inference.inference.ConfirmationPoCEvent', 'recipe'), CHAIN_DIFFERENCES),
    ['deliberate difference inference.inference.ConfirmationPoCEvent.recipe (not-in-chain): not found any more; remove it'],
    'the sixth row, recipe: a difference listed but gone fails too')
})

t.test('a field added to a message of the manifest fails until it is served or listed', async (t) => {
  const newer = CHAIN_MESSAGES.map((m) => m.name !== 'inference.bls.EpochBLSData' ? m : { ...m, fields: [...m.fields, { number: 17, name: 'slot_weights', type: 'uint32', repeated: true as const }] })
  t.same(fieldProblems(newer, served, CHAIN_DIFFERENCES), ['inference.bls.EpochBLSData.slot_weights (field 17, repeated uint32): not in the schema served, nor a deliberate difference'])
  const listed = [...CHAIN_DIFFERENCES, { message: 'inference.bls.EpochBLSData', field: 'slot_weights', kind: 'not-served' as const, why: 'test' }]
  t.same(fieldProblems(newer, served, listed), [], 'a deliberate difference with its reason is accepted')
  const message: ChainMessage = { file: 'inference/bls/types.proto', name: 'inference.bls.SlotWeights', fields: [] }
  t.same(fieldProblems([...CHAIN_MESSAGES, message], served, CHAIN_DIFFERENCES), [`inference.bls.SlotWeights: no schema served names it (${CHAIN_MESSAGE_KEY})`])
})

t.test('a field served in another JSON type than the chain\'s fails', async (t) => {
  const retyped = (name: string, field: string, type: string, extra: Partial<ChainField> = {}): ChainMessage[] => CHAIN_MESSAGES.map((m) =>
    m.name !== name ? m : { ...m, fields: m.fields.map((f) => f.name === field ? { number: f.number, name: f.name, type, ...extra } : f) })
  const problems = (name: string, field: string, type: string, extra?: Partial<ChainField>): string[] => fieldProblems(retyped(name, field, type, extra), served, CHAIN_DIFFERENCES)
  t.same(problems('inference.bls.ThresholdSigningRequest', 'attempt', 'uint64'), ['inference.bls.ThresholdSigningRequest.attempt (field 12, uint64): served as integer uint32, not uint64'])
  t.same(problems('inference.bls.EpochBLSData', 'group_public_key', 'bytes', { repeated: true }), ['inference.bls.EpochBLSData.group_public_key (field 8, repeated bytes): served as string, not a list'])
  t.same(problems('inference.bls.EpochBLSData', 'participants', 'inference.bls.SlotWeights', { repeated: true }),
    ['inference.bls.EpochBLSData.participants (field 4, repeated inference.bls.SlotWeights): served as object, not the message inference.bls.SlotWeights'])
  t.same(problems('inference.bls.EpochBLSData', 'epoch_id', 'inference.bls.DKGPhase', { enum: true }), ['inference.bls.EpochBLSData.epoch_id (field 1, inference.bls.DKGPhase): served as integer uint64, not the enum inference.bls.DKGPhase'])
  t.same(problems('inference.bls.EpochBLSData', 'i_total_slots', 'inference.bls.DKGPhase', { enum: true }), ['inference.bls.EpochBLSData.i_total_slots (field 2, inference.bls.DKGPhase): served as integer uint32, not the enum inference.bls.DKGPhase'])
  const unlisted = CHAIN_DIFFERENCES.filter((d) => d.field !== 'status')
  t.same(fieldProblems(CHAIN_MESSAGES, served, unlisted), ['inference.bls.ThresholdSigningRequest.status (field 7, inference.bls.ThresholdSigningStatus): served as its number, Go writes the name; not a deliberate difference'])
})

t.test('docs/chain-version.md names the chain version followed and where its protos were read', async (t) => {
  const doc = readFileSync(new URL('../../docs/chain-version.md', import.meta.url), 'utf8')
  t.match(doc, `**${CHAIN_VERSION.version}**`)
  t.match(doc, `${CHAIN_VERSION.repository}@${CHAIN_VERSION.commit}`)
})
