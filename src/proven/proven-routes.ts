import { decodeActiveParticipants } from '../chain/active-participants.js'
import {
  activeConfirmationPoCEventKey,
  activeParticipantsKey,
  effectiveEpochIndexKey,
  epochGroupDataKey,
  epochKey,
  keyId,
  paramsKey
} from './store-keys.js'
import { confirmationEventValue, epochGroupValue, epochParamsValue, epochValue, uint64Value, type EpochGroupValue } from './store-values.js'

// The proven routes: the one list of what edge-api can answer from proven store values
// (docs/verified-reads.md, "Proven answers"; the reference's §2.8: the routes whose answer is
// one store value or a few). For each: the store keys its answer derives from, and the parts
// of the answer those values determine, both as the proofs give them (`expected`) and as the
// answer has them (`answered`), which checkAnswer (check-answer.ts) compares.
//
// Keys depend on values: the current epoch names the groups to read, the parent group its
// models. So `keys` is asked again with what has been proven so far, and says every key it
// needs given that; the read is complete when it names none that is not proven yet.

/** Proven values by key (keyId): the bytes, or null when the key is proven absent. */
export type ProvenValues = ReadonlyMap<string, Uint8Array | null>

/** What a route's answer was asked with: its path parameters, and the height V it is answered at. */
export interface RouteRequest {
  readonly params: Readonly<Record<string, string>>
  readonly height: number
}

export interface ProvenRoute {
  /** The route as docs/routes.md names it (or, for the current epoch, the step every `epoch=current` takes). */
  readonly route: string
  /** Parts of the answer no proof covers (lists: no range proofs), so the answer as a whole is not verified. */
  readonly unproven: readonly string[]
  /** Every key the answer needs, given the values proven so far. */
  readonly keys: (request: RouteRequest, proven: ProvenValues) => Uint8Array[]
  /** The parts of the answer the proven values determine. */
  readonly expected: (request: RouteRequest, proven: ProvenValues) => unknown
  /** The same parts, as the answer has them. */
  readonly answered: (answer: Record<string, any>) => unknown
}

/** The proven value of `key`; undefined when proven absent or not proven yet. */
function valueOf (proven: ProvenValues, key: Uint8Array): Uint8Array | undefined {
  return proven.get(keyId(key)) ?? undefined
}

/** `decode` of the proven value of `key`; undefined when proven absent or not proven yet. */
function decoded<T> (proven: ProvenValues, key: Uint8Array | undefined, decode: (bytes: Uint8Array) => T): T | undefined {
  const value = key === undefined ? undefined : valueOf(proven, key)
  return value === undefined ? undefined : decode(value)
}

/** The effective epoch, once EffectiveEpochIndex is proven (present). */
function effectiveEpoch (proven: ProvenValues): bigint | undefined {
  return decoded(proven, effectiveEpochIndexKey(), uint64Value)
}

/** The epoch a participants request names: its number, or the effective one for "current". */
function participantsEpoch ({ params }: RouteRequest, proven: ProvenValues): bigint | undefined {
  return params.epoch === 'current' ? effectiveEpoch(proven) : BigInt(params.epoch as string)
}

/** The current parent group, once proven present. */
function parentGroup (proven: ProvenValues): EpochGroupValue | undefined {
  const epoch = effectiveEpoch(proven)
  return decoded(proven, epoch === undefined ? undefined : epochGroupDataKey(epoch, ''), epochGroupValue)
}

/** EffectiveEpochIndex, the parent group, and one sub-group per model it lists (at the parent's epoch_index, as edge-api asks). */
function groupKeys (_request: RouteRequest, proven: ProvenValues): Uint8Array[] {
  const epoch = effectiveEpoch(proven)
  if (epoch === undefined) return [effectiveEpochIndexKey()]
  const parent = parentGroup(proven)
  const models = parent === undefined ? [] : parent.sub_group_models.map((id) => epochGroupDataKey(parent.epoch_index, id))
  return [effectiveEpochIndexKey(), epochGroupDataKey(epoch, ''), ...models]
}

/** The served models: each listed sub-group proven present with a snapshot, in the parent's order (the rest are left out, as edge-api does). */
function servedModels (proven: ProvenValues): { price: bigint, snapshots: NonNullable<EpochGroupValue['model_snapshot']>[] } {
  const parent = parentGroup(proven)
  if (parent === undefined) return { price: 0n, snapshots: [] }
  const snapshots = parent.sub_group_models.flatMap((id) => {
    const snapshot = decoded(proven, epochGroupDataKey(parent.epoch_index, id), epochGroupValue)?.model_snapshot
    return snapshot === undefined ? [] : [snapshot]
  })
  return { price: parent.unit_of_compute_price, snapshots }
}

/** epoch_info's latest epoch: the upcoming one when it exists (its PoC began), else the effective one (GetLatestEpoch). */
function latestEpochKeys (proven: ProvenValues): Uint8Array[] {
  const epoch = effectiveEpoch(proven)
  if (epoch === undefined) return []
  const upcoming = epochKey(epoch + 1n)
  return proven.get(keyId(upcoming)) === null ? [upcoming, epochKey(epoch)] : [upcoming]
}

function epochInfo (request: RouteRequest, proven: ProvenValues): unknown {
  const event = decoded(proven, activeConfirmationPoCEventKey(), confirmationEventValue)
  return {
    block_height: request.height,
    // The last key named is the one GetLatestEpoch answers with.
    latest_epoch: decoded(proven, latestEpochKeys(proven).at(-1), epochValue),
    epoch_params: decoded(proven, paramsKey(), epochParamsValue),
    // The chain's EpochInfo: active exactly when the Item holds an event.
    is_confirmation_poc_active: event !== undefined,
    active_confirmation_poc_event: event
  }
}

const pick = (answer: Record<string, any>, ...names: string[]): Record<string, unknown> => Object.fromEntries(names.map((name) => [name, answer[name]]))

export const PROVEN_ROUTES: readonly ProvenRoute[] = [
  {
    route: 'epoch=current',
    unproven: [],
    keys: () => [effectiveEpochIndexKey()],
    expected: (_request, proven) => ({ epoch: effectiveEpoch(proven) }),
    // get_current_epoch's REST answer, which every epoch=current resolves with.
    answered: (answer) => pick(answer, 'epoch')
  },
  {
    route: '/v1/epochs/{epoch}/participants',
    unproven: ['excluded_participants (a list)', 'validators and block (the signed header H + 1 and its set, not a store value)'],
    keys: (request, proven) => {
      const epoch = participantsEpoch(request, proven)
      const first = request.params.epoch === 'current' ? [effectiveEpochIndexKey()] : []
      return epoch === undefined ? first : [...first, activeParticipantsKey(epoch)]
    },
    expected: (request, proven) => {
      const epoch = participantsEpoch(request, proven)
      const value = epoch === undefined ? undefined : valueOf(proven, activeParticipantsKey(epoch))
      // Proven absent: the answer is a 404, with nothing in it to compare.
      if (value === undefined) return undefined
      return { active_participants: decodeActiveParticipants(value), active_participants_bytes: Buffer.from(value).toString('hex') }
    },
    answered: (answer) => pick(answer, 'active_participants', 'active_participants_bytes')
  },
  {
    route: '/v1/epochs/latest',
    unproven: [],
    keys: (_request, proven) => [paramsKey(), effectiveEpochIndexKey(), activeConfirmationPoCEventKey(), ...latestEpochKeys(proven)],
    expected: epochInfo,
    answered: (answer) => pick(answer, 'block_height', 'latest_epoch', 'epoch_params', 'is_confirmation_poc_active', 'active_confirmation_poc_event')
  },
  {
    route: '/v1/models',
    unproven: [],
    keys: groupKeys,
    expected: (_request, proven) => ({
      data: servedModels(proven).snapshots.map((m) => ({ id: m.id, hugging_face_id: m.hf_repo, context_length: m.context_window, max_output_length: m.context_window }))
    }),
    answered: (answer) => ({ data: (answer.data as Array<Record<string, any>>).map((m) => pick(m, 'id', 'hugging_face_id', 'context_length', 'max_output_length')) })
  },
  {
    route: '/v1/pricing',
    unproven: [],
    keys: groupKeys,
    expected: (_request, proven) => {
      const { price, snapshots } = servedModels(proven)
      // The chain's int64 price as the Go service reported it: uint64(price).
      const unit = BigInt.asUintN(64, price)
      return {
        unit_of_compute_price: unit,
        models: snapshots.map((m) => ({ id: m.id, units_of_compute_per_token: m.units_of_compute_per_token, price_per_token: m.units_of_compute_per_token * unit }))
      }
    },
    answered: (answer) => pick(answer, 'unit_of_compute_price', 'models')
  }
]

/** The proven route named `route`, or undefined for a route whose answer cannot be proven. */
export function provenRoute (route: string): ProvenRoute | undefined {
  return PROVEN_ROUTES.find((r) => r.route === route)
}
