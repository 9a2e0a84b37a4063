import { exactInteger, type Int64Value } from '../wire/schema.js'

// The chain's epoch phase and stage maths, re-implemented from gonka-ai/gonka
// inference-chain/x/inference/types: epoch_context.go (the newest version found: the one
// with InferenceValidationCutoff() and a validation exchange window that ends at
// EndOfPoCValidation), epoch_params.go (the version without EpochMultiplier, with the 0.8
// wind-down factors) and epoch_stages.go / epoch_stages_compute.go (the JSON keys
// poc_generation_wind_down, poc_validation_wind_down, inference_validation_cutoff).
// The Go edge-api computed these locally from EpochInfo with that library code, so a
// difference here would be a difference on the wire.
//
// All arithmetic is on bigint wrapped to 64 bits, as Go's int64/uint64 wrap, so even
// absurd chain values give the answer the Go service gave.

export type EpochPhase = 'PoCGenerate' | 'PoCGenerateWindDown' | 'PoCValidate' | 'PoCValidateWindDown' | 'Inference'

/** The EpochParams fields the maths reads (0 when the chain leaves one out, as in Go). */
export interface EpochParams {
  readonly epochLength: bigint
  readonly epochShift: bigint
  readonly pocStageDuration: bigint
  readonly pocExchangeDuration: bigint
  readonly pocValidationDelay: bigint
  readonly pocValidationDuration: bigint
  readonly setNewValidatorsDelay: bigint
  readonly inferenceValidationCutoff: bigint
}

/** An epoch anchored at its PoC start block: Go's EpochContext. */
export interface EpochContext {
  /** uint64 */
  readonly index: bigint
  /** int64 */
  readonly pocStartBlockHeight: bigint
  readonly params: EpochParams
}

export interface ExchangeWindow {
  readonly start: Int64Value
  readonly end: Int64Value
}

/** Go's EpochStages, in its field order and with its JSON keys (no omitempty). */
export interface EpochStages {
  readonly epoch_index: Int64Value
  readonly poc_start: Int64Value
  readonly poc_generation_wind_down: Int64Value
  readonly poc_generation_end: Int64Value
  readonly poc_validation_start: Int64Value
  readonly poc_validation_wind_down: Int64Value
  readonly poc_validation_end: Int64Value
  readonly set_new_validators: Int64Value
  readonly claim_money: Int64Value
  readonly inference_validation_cutoff: Int64Value
  readonly next_poc_start: Int64Value
  readonly poc_exchange_window: ExchangeWindow
  readonly poc_validation_exchange_window: ExchangeWindow
}

// PoCGenerateWindDownFactor and PoCValidateWindDownFactor in epoch_params.go.
const WIND_DOWN_FACTOR = 0.8

const i64 = (n: bigint): bigint => BigInt.asIntN(64, n)

/** Go's int64(float64(d) * 0.8): both conversions and the product round exactly as IEEE doubles do in Go. */
function windDown (duration: bigint): bigint {
  return BigInt(Math.trunc(Number(duration) * WIND_DOWN_FACTOR))
}

// Offsets from the PoC start (EpochParams.Get…Stage in epoch_params.go).
const endOfPoCStage = (p: EpochParams): bigint => i64(p.pocStageDuration)
const pocWindDownStage = (p: EpochParams): bigint => i64(windDown(p.pocStageDuration))
const pocExchangeDeadline = (p: EpochParams): bigint => i64(endOfPoCStage(p) + p.pocExchangeDuration)
const startOfPoCValidationStage = (p: EpochParams): bigint => i64(endOfPoCStage(p) + p.pocValidationDelay)
const pocValidationWindDownStage = (p: EpochParams): bigint => i64(startOfPoCValidationStage(p) + windDown(p.pocValidationDuration))
const endOfPoCValidationStage = (p: EpochParams): bigint => i64(startOfPoCValidationStage(p) + p.pocValidationDuration)
const setNewValidatorsStage = (p: EpochParams): bigint => i64(endOfPoCValidationStage(p) + p.setNewValidatorsDelay)
const claimMoneyStage = (p: EpochParams): bigint => i64(setNewValidatorsStage(p) + 1n)

/** An absolute height: the anchor plus an offset, or 0 in epoch 0, which runs no PoC. */
function at (ctx: EpochContext, offset: (p: EpochParams) => bigint): bigint {
  return ctx.index === 0n ? 0n : i64(ctx.pocStartBlockHeight + offset(ctx.params))
}

function nextPoCStart (ctx: EpochContext): bigint {
  const p = ctx.params
  return ctx.index === 0n ? i64(-p.epochShift + p.epochLength) : i64(ctx.pocStartBlockHeight + p.epochLength)
}

/** The epoch after this one, with the same params (Go's NextEpochContext). */
export function nextEpochContext (ctx: EpochContext): EpochContext {
  return { index: BigInt.asUintN(64, ctx.index + 1n), pocStartBlockHeight: nextPoCStart(ctx), params: ctx.params }
}

/** Which phase `blockHeight` is in (Go's GetCurrentPhase). */
export function currentPhase (ctx: EpochContext, blockHeight: bigint): EpochPhase {
  if (ctx.index === 0n) return 'Inference'
  // Inference is the chain's own safe default for a height before the anchor.
  if (blockHeight < ctx.pocStartBlockHeight) return 'Inference'
  const startOfPoC = ctx.pocStartBlockHeight
  const generateWindDown = at(ctx, pocWindDownStage)
  const startOfValidation = at(ctx, startOfPoCValidationStage)
  const validateWindDown = at(ctx, pocValidationWindDownStage)
  const endOfValidation = at(ctx, endOfPoCValidationStage)
  if (blockHeight >= startOfPoC && blockHeight < generateWindDown) return 'PoCGenerate'
  if (blockHeight >= generateWindDown && blockHeight < startOfValidation) return 'PoCGenerateWindDown'
  if (blockHeight >= startOfValidation && blockHeight < validateWindDown) return 'PoCValidate'
  if (blockHeight >= validateWindDown && blockHeight < endOfValidation) return 'PoCValidateWindDown'
  return 'Inference'
}

/** Every stage boundary of the epoch as absolute block heights (Go's GetEpochStages). */
export function epochStages (ctx: EpochContext): EpochStages {
  const genesis = ctx.index === 0n
  const pocStart = genesis ? 0n : ctx.pocStartBlockHeight
  const validationStart = at(ctx, startOfPoCValidationStage)
  const validationEnd = at(ctx, endOfPoCValidationStage)
  const next = nextPoCStart(ctx)
  return {
    epoch_index: exactInteger(ctx.index),
    poc_start: exactInteger(pocStart),
    poc_generation_wind_down: exactInteger(at(ctx, pocWindDownStage)),
    poc_generation_end: exactInteger(at(ctx, endOfPoCStage)),
    poc_validation_start: exactInteger(validationStart),
    poc_validation_wind_down: exactInteger(at(ctx, pocValidationWindDownStage)),
    poc_validation_end: exactInteger(validationEnd),
    set_new_validators: exactInteger(at(ctx, setNewValidatorsStage)),
    claim_money: exactInteger(at(ctx, claimMoneyStage)),
    // Not zeroed for epoch 0: the chain derives it from next_poc_start in every epoch.
    inference_validation_cutoff: exactInteger(i64(next - ctx.params.inferenceValidationCutoff)),
    next_poc_start: exactInteger(next),
    // Epoch 0 has no PoC, so no exchange windows either.
    poc_exchange_window: genesis
      ? { start: 0, end: 0 }
      : { start: exactInteger(i64(pocStart + 1n)), end: exactInteger(at(ctx, pocExchangeDeadline)) },
    poc_validation_exchange_window: genesis
      ? { start: 0, end: 0 }
      : { start: exactInteger(i64(validationStart + 1n)), end: exactInteger(validationEnd) }
  }
}
