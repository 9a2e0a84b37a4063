import type { EpochContext } from './epoch-stages.js'
import type { ChainReader } from './types.js'

// The epoch the event stream counts stages from (src/chain/chain-events.ts): the chain's
// EpochInfo, read once and kept until a height beyond its epoch is asked about (a new epoch,
// whose params may differ): one chain read per epoch per replica, shared by every stream.

const EPOCH_INFO_PATH = '/productscience/inference/inference/epoch_info'

interface GatewayEpochInfo {
  params?: { epoch_params?: Record<string, unknown> | null } | null
  latest_epoch?: { index?: unknown, poc_start_block_height?: unknown } | null
}

/** The chain's current epoch, read when needed; undefined while it cannot be read. */
export class EpochAnchor {
  readonly #chain: ChainReader
  #anchor: EpochContext | undefined
  #reading: Promise<EpochContext | undefined> | undefined

  constructor (chain: ChainReader) {
    this.#chain = chain
  }

  /** An epoch of the chain's that places `height` (read again once `height` is past its epoch). */
  async at (height: number): Promise<EpochContext | undefined> {
    const anchor = this.#anchor
    if (anchor !== undefined && BigInt(height) < anchor.pocStartBlockHeight + anchor.params.epochLength) return anchor
    this.#reading ??= this.#read().finally(() => { this.#reading = undefined })
    return this.#reading
  }

  async #read (): Promise<EpochContext | undefined> {
    try {
      const info = await this.#chain.get(EPOCH_INFO_PATH) as GatewayEpochInfo
      const p = info.params?.epoch_params ?? {}
      const n = (key: string): bigint => BigInt(String(p[key] ?? 0))
      this.#anchor = {
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
    } catch {
      // Unreadable (the chain down, a malformed answer): the anchor kept, if any; heads only otherwise.
    }
    return this.#anchor
  }
}
