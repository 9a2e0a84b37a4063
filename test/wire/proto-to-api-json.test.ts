import t from 'tap'
import { Type } from 'typebox'
import { ApiBytes, ApiEnum, ApiIfSent, ApiOpenMessage, toApiJson } from '../../src/wire/proto-to-api-json.js'
import { Int32, Int64, Nullable, Uint64 } from '../../src/wire/schema.js'

const Phase = ApiEnum(['PHASE_UNDEFINED', 'PHASE_DEALING', 'PHASE_COMPLETED'])
const Inner = Type.Object({ height: Int64(), note: Type.String() })
const Message = Type.Object({
  epoch_id: Uint64(),
  deadline: Int64(),
  slots: Int32(),
  ratio: Type.Number(),
  phase: Phase,
  flag: Type.Boolean(),
  key: ApiBytes(),
  name: Type.String(),
  tags: Type.Array(Type.String()),
  heights: Type.Array(Int64()),
  inner: Nullable(Inner),
  embedded: Inner,
  list: Type.Array(Nullable(Inner)),
  open: Nullable(ApiOpenMessage({ stage_height: Int64(), nested: ApiOpenMessage({ value: Int64() }, 'nested') }, 'open'))
})

t.test('the TestProtoToAPIJSON_EnumNamesAndNumericInts case: numbers for integers, the enum name kept', async (t) => {
  // zpoken/gonka common/queryapi/protojson_test.go@ef1a5efd, as the gateway writes that EpochBLSData.
  const out = toApiJson(Message, { epoch_id: '7', phase: 'PHASE_COMPLETED', deadline: '100' }) as Record<string, unknown>
  t.equal(out.epoch_id, 7)
  t.equal(out.deadline, 100)
  t.equal(out.phase, 'PHASE_COMPLETED')
})

t.test('every field is present with its protojson default (EmitDefaults)', async (t) => {
  t.same(toApiJson(Message, {}), {
    epoch_id: 0,
    deadline: 0,
    slots: 0,
    ratio: 0,
    phase: 'PHASE_UNDEFINED',
    flag: false,
    key: null,
    name: '',
    tags: [],
    heights: [],
    inner: null,
    embedded: { height: 0, note: '' },
    list: [],
    open: null
  })
  t.same(Object.keys(toApiJson(Message, null) as object), Object.keys(Message.properties), 'null is the empty message')
})

t.test('values are converted exactly; unknown fields dropped; unexpected types read as defaults', async (t) => {
  const out = toApiJson(Message, {
    epoch_id: '18446744073709551615',
    deadline: '-9223372036854775808',
    slots: 3,
    ratio: 0.5,
    phase: 2,
    flag: true,
    key: 'AQI=',
    name: 'n',
    tags: ['a', 'b'],
    heights: ['9007199254740993', 5],
    inner: { height: '12', note: 'x', extra: 1 },
    embedded: null,
    list: [null, { height: '1' }],
    open: { stage_height: '42', scheme: 'POC_SCHEME_PREFILL', nested: { value: '3', exponent: -1 }, models: [{ seq_len: '1024' }] },
    unknown: 'dropped'
  })
  t.same(out, {
    epoch_id: 18446744073709551615n,
    deadline: -9223372036854775808n,
    slots: 3,
    ratio: 0.5,
    phase: 2,
    flag: true,
    key: 'AQI=',
    name: 'n',
    tags: ['a', 'b'],
    heights: [9007199254740993n, 5],
    inner: { height: 12, note: 'x' },
    embedded: { height: 0, note: '' },
    list: [null, { height: 1, note: '' }],
    open: { stage_height: 42, scheme: 'POC_SCHEME_PREFILL', nested: { value: 3, exponent: -1 }, models: [{ seq_len: '1024' }] }
  }, 'an enum number stays a number; open messages keep what they do not list, as given')
  t.same(toApiJson(Message, { epoch_id: true, ratio: '1', flag: 'yes', key: '', name: 5, tags: 'x', inner: 'x', phase: null }), toApiJson(Message, {}),
    'empty bytes are null; values of the wrong type are defaults')
  t.same(toApiJson(Message, { open: {} }), { ...(toApiJson(Message, {}) as object), open: {} }, 'an open message fills nothing in')
})

t.test('a field only some chain versions have: written when the gateway sends the key, null included; no key otherwise', async (t) => {
  const Event = Type.Object({ height: Int64(), recipe: ApiIfSent(Nullable(Inner)) })
  t.same(toApiJson(Event, { height: '5' }), { height: 5 }, 'an older chain: no key')
  t.same(toApiJson(Event, {}), { height: 0 })
  t.same(toApiJson(Event, { height: '5', recipe: null }), { height: 5, recipe: null }, 'the chain has the field, unset')
  t.same(toApiJson(Event, { recipe: { height: '9' } }), { height: 0, recipe: { height: 9, note: '' } }, 'converted like any field')
})
