import t from 'tap'
import { parseJson, RawNumber, type Json } from '../../scripts/compat/json.js'
import { startEdgeApiForClients } from '../fixtures/clients/edge-api.js'
import { COMPLETED_REQUEST_ID, FINAL_SIGNATURE, PENDING_REQUEST_ID } from '../../harness/chain-simulator/data/bls.js'

// testermint, gonka's integration harness (Kotlin, Gson), as it reads edge-api:
// gonka-ai/gonka@312044d28c7170d7f08bf88e41427396f3b95817
// - testermint/src/main/kotlin/Main.kt L403-415: cosmosJson, Gson with LOWER_CASE_WITH_UNDERSCORES
//   and testermint's LongDeserializer for every Long (data/converters.kt L44-52:
//   java.lang.Long.parseLong(json.asString.replace("_", ""))).
// - ApplicationAPI.kt L277-280 getLatestEpoch (GET v1/epochs/latest → data/epoch.kt EpochResponse),
//   L321-324 queryBLSSigningStatus (GET v1/bls/signatures/{hex} → com/productscience/data/bls.kt
//   SigningStatusWrapper, whose ThresholdSigningRequest.status is a String).
// - src/test/kotlin/BLSDKGSuccessTest.kt L263-276: status.toString().toInt() →
//   ThresholdSigningStatus.fromValue; the final signature decodes to 48 bytes.
// - Epochs.kt L16-35: getNextStage/resolveUpcomingStage, assert(latest < next) for every stage.
// Gson reads the raw JSON, so numbers keep their text (RawNumber) as Gson's JsonReader does.

class KotlinException extends Error {}

/** Gson's String adapter: a string, or a number or boolean as its literal text (JsonReader.nextString). */
function gsonString (value: Json | undefined, field: string): string | null {
  if (value === undefined || value === null) return null
  if (typeof value === 'string') return value
  if (value instanceof RawNumber) return value.text
  if (typeof value === 'boolean') return String(value)
  throw new KotlinException(`JsonSyntaxException: Expected a string but was BEGIN_${Array.isArray(value) ? 'ARRAY' : 'OBJECT'} at ${field}`)
}

/** testermint's LongDeserializer: json.asString, "" is null, else Long.parseLong. */
function gsonLong (value: Json | undefined, field: string): bigint | null {
  if (value === undefined || value === null) return null
  if (typeof value === 'object' && !(value instanceof RawNumber)) throw new KotlinException(`UnsupportedOperationException: JsonObject at ${field}`)
  const text = value instanceof RawNumber ? value.text : String(value)
  if (text === '') return null
  const digits = text.replace(/_/g, '')
  if (!/^[-+]?\d+$/.test(digits) || BigInt(digits) > 2n ** 63n - 1n || BigInt(digits) < -(2n ** 63n)) {
    throw new KotlinException(`NumberFormatException: For input string: "${text}" at ${field}`)
  }
  return BigInt(digits)
}

/** Kotlin's String.toInt(). */
function toInt (text: string): number {
  if (!/^[-+]?\d+$/.test(text) || Math.abs(Number(text)) > 2 ** 31) throw new KotlinException(`NumberFormatException: For input string: "${text}"`)
  return Number(text)
}

/** Gson's enum adapter: the constant of that name, null for any other value. */
function gsonEnum<T extends string> (value: Json | undefined, constants: readonly T[]): T | null {
  return typeof value === 'string' && (constants as readonly string[]).includes(value) ? value as T : null
}

const field = (obj: Json | undefined, key: string): Json | undefined =>
  obj !== null && typeof obj === 'object' && !Array.isArray(obj) && !(obj instanceof RawNumber) ? obj[key] : undefined

/** BLSDKGSuccessTest's enum ThresholdSigningStatus (L521-532). */
const THRESHOLD_SIGNING_STATUS: Record<number, string> = { 0: 'UNSPECIFIED', 1: 'COLLECTING_SIGNATURES', 2: 'AGGREGATING', 3: 'COMPLETED', 5: 'EXPIRED' }
const EPOCH_PHASES = ['PoCGenerate', 'PoCGenerateWindDown', 'PoCValidate', 'PoCValidateWindDown', 'Inference'] as const

const edge = await startEdgeApiForClients(t)

/** queryBLSSigningStatus, then the test's reads of it (BLSDKGSuccessTest L263-276). */
async function signingStatus (requestIdHex: string): Promise<{ statusEnum: string, sigBytes: number }> {
  const res = await edge.get(`/v1/bls/signatures/${requestIdHex}`)
  if (res.status < 200 || res.status > 299) throw new KotlinException(`HTTP ${res.status}`)
  const signingRequest = field(parseJson(res.text), 'signing_request')
  const status = gsonString(field(signingRequest, 'status'), 'signing_request.status')
  const statusCode = toInt(String(status))
  const statusEnum = THRESHOLD_SIGNING_STATUS[statusCode] ?? 'UNSPECIFIED'
  const finalSignature = gsonString(field(signingRequest, 'final_signature'), 'signing_request.final_signature')
  return { statusEnum, sigBytes: finalSignature === null ? -1 : Buffer.from(finalSignature, 'base64').length }
}

t.test('BLSDKGSuccessTest: the signing status parses with toString().toInt() and is COMPLETED', async (t) => {
  const completed = await signingStatus(COMPLETED_REQUEST_ID)
  t.equal(completed.statusEnum, 'COMPLETED', 'assertThat(statusEnum).isEqualTo(ThresholdSigningStatus.COMPLETED)')
  t.equal(completed.sigBytes, FINAL_SIGNATURE.length)
  t.equal(completed.sigBytes, 48, 'assertThat(sigBytes).hasSize(48): compressed G1')
  const pending = await signingStatus(PENDING_REQUEST_ID)
  t.equal(pending.statusEnum, 'COLLECTING_SIGNATURES', 'status 1, as testermint names it')
  t.equal(pending.sigBytes, -1, 'finalSignature is null until completed')
})

t.test('getLatestEpoch: every Long parses, phase is a known EpochPhase, every upcoming stage resolves', async (t) => {
  const res = await edge.get('/v1/epochs/latest')
  t.equal(res.status, 200)
  const body = parseJson(res.text)
  const blockHeight = gsonLong(field(body, 'block_height'), 'block_height') as bigint
  t.ok(blockHeight > 0n)
  t.ok((gsonLong(field(field(body, 'latest_epoch'), 'index'), 'latest_epoch.index') ?? 0n) > 0n)
  gsonLong(field(field(body, 'latest_epoch'), 'poc_start_block_height'), 'latest_epoch.poc_start_block_height')
  t.equal(gsonEnum(field(body, 'phase'), EPOCH_PHASES), 'Inference', 'Gson maps the phase by name; any other value would be null')

  const stages = (key: string): Record<string, bigint> => {
    const s = field(body, key)
    const longs: Record<string, bigint> = {}
    for (const name of ['epoch_index', 'poc_start', 'poc_generation_wind_down', 'poc_generation_end', 'poc_validation_start',
      'poc_validation_wind_down', 'poc_validation_end', 'set_new_validators', 'claim_money', 'next_poc_start']) {
      const v = gsonLong(field(s, name), `${key}.${name}`)
      t.not(v, null, `${key}.${name} present`)
      longs[name] = v as bigint
    }
    for (const window of ['poc_exchange_window', 'poc_validation_exchange_window']) {
      longs[`${window}.end`] = gsonLong(field(field(s, window), 'end'), `${key}.${window}.end`) as bigint
      gsonLong(field(field(s, window), 'start'), `${key}.${window}.start`)
    }
    return longs
  }
  const latest = stages('epoch_stages')
  const next = stages('next_epoch_stages')
  // EpochStage → the field getNextStage reads (Epochs.kt L16-26).
  for (const name of ['poc_start', 'poc_generation_end', 'poc_exchange_window.end', 'poc_validation_start', 'poc_validation_end', 'set_new_validators', 'claim_money']) {
    t.ok((latest[name] as bigint) < (next[name] as bigint), `resolveUpcomingStage: assert(latest < next) for ${name}`)
  }
})
