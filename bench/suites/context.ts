import type { Load } from '../lib/load.js'
import type { SimHandle } from '../lib/servers.js'

export interface Context {
  readonly load: Load
  /** The chain simulator every suite shares; suites leave it without faults and latency. */
  readonly sim: SimHandle
  /** Measured rounds per side-by-side comparison. */
  readonly rounds: number
  /** Seconds per measured run. */
  readonly runS: number
  readonly warmupS: number
  /** Length of each of the two memory phases, seconds. */
  readonly memoryPhaseS: number
}

export const PARTICIPANT_PATH = '/productscience/inference/inference/inference_participant/'
export { NODE_INFO_PATH } from '../../src/chain/paths.js'
