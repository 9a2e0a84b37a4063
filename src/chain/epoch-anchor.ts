import { pause, REAL_CLOCK, type Clock } from '../clock.js'
import type { EpochContext } from './epoch-stages.js'
import type { ChainReader } from './types.js'

// The epoch the event stream counts stages from (src/chain/chain-events.ts): the chain's
// EpochInfo, read once and kept until a height beyond its epoch is asked about (a new epoch,
// whose params may differ): one chain read per epoch per replica, shared by every stream. A
// read that fails is tried again, READ_ATTEMPTS in all with a growing pause, before the
// anchor known (if any) is kept: a replica whose read failed once would otherwise send a
// height's events without its stage and epoch events, which every other replica sends.

/** How many times the epoch is read before the anchor known is kept; the pauses between, doubling from RETRY_MS. */
export const READ_ATTEMPTS = 4
export const RETRY_MS = 250

const EPOCH_INFO_PATH = '/productscience/inference/inference/epoch_info'

interface GatewayEpochInfo {
  params?: { epoch_params?: Record<string, unknown> | null } | null
  latest_epoch?: { index?: unknown, poc_start_block_height?: unknown } | null
}

/** The chain's current epoch, read when needed; undefined while it cannot be read. */
export class EpochAnchor {
  readonly #chain: ChainReader
  readonly #clock: Clock
  #anchor: EpochContext | undefined
  #reading: Promise<EpochContext | undefined> | undefined

  constructor (chain: ChainReader, clock: Clock = REAL_CLOCK) {
    this.#chain = chain
    this.#clock = clock
  }

  /** An epoch of the chain's that places `height` (read again once `height` is past its epoch). */
  async at (height: number): Promise<EpochContext | undefined> {
    const anchor = this.#anchor
    if (anchor !== undefined && BigInt(height) < anchor.pocStartBlockHeight + anchor.params.epochLength) return anchor
    this.#reading ??= this.#read().finally(() => { this.#reading = undefined })
    return this.#reading
  }

  /** Reads the epoch, READ_ATTEMPTS times at most; the anchor known (if any) when every read failed. */
  async #read (attempt = 1): Promise<EpochContext | undefined> {
    try {
      this.#anchor = contextOf(await this.#chain.get(EPOCH_INFO_PATH) as GatewayEpochInfo)
      return this.#anchor
    } catch {
      // Unreadable (the chain down, a malformed answer): again after a pause, then the anchor kept.
      if (attempt >= READ_ATTEMPTS) return this.#anchor
      await pause(this.#clock, RETRY_MS * 2 ** (attempt - 1))
      return await this.#read(attempt + 1)
    }
  }
}

/** The epoch an EpochInfo answer names (fields left out are 0, as in Go). */
function contextOf (info: GatewayEpochInfo): EpochContext {
  const p = info.params?.epoch_params ?? {}
  const n = (key: string): bigint => BigInt(String(p[key] ?? 0))
  return {
    index: BigInt(String(info.latest_epoch?.index ?? 0)),
    pocStartBlockHeight: BigInt(String(info.latest_epoch?.poc_start_block_height ?? 0)),
    params: {
      epochLength: n('epoch_length'),
      epochShift: n('epoch_shift'),
      pocStageDuration: n('poc_stage_duration'),
      pocExchangeDuration: n('poc_exchange_duration'),
      pocValidationDelay: n('poc_validation_delay'),
      pocValidationDuration: n('poc_validation_duration'),
      setNewValidatorsDelay: n('set_new_validators_delay'),
      inferenceValidationCutoff: n('inference_validation_cutoff')
    }
  }
}
