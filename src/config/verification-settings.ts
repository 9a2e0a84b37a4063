import { formatDuration } from '../duration.js'
import { ConfigError } from '../errors.js'
import type { TrustRoot } from '../light/trust-root.js'
import type { SettingReader } from './setting-reader.js'

// Verified reads (docs/verified-reads.md): the mode, the trust root the light client starts
// from, and how long a verified header vouches for what follows it. Read by loadConfig
// (src/config.ts). Boot checks the root's presence and form only: whether it has expired
// depends on its header's time, known once the header is fetched, so the light client
// refuses an expired root on first contact (src/light/trust-root.ts), naming the variables.

export type VerificationSettingKey = 'EDGE_API_VERIFICATION' | 'EDGE_API_TRUST_HEIGHT' | 'EDGE_API_TRUST_HASH' | 'EDGE_API_TRUSTING_PERIOD'

/** off: as before; headers: follow the chain as a light client; answers: also prove single-key answers; strict: serve only proven answers. */
export const VERIFICATION_MODES = ['off', 'headers', 'answers', 'strict'] as const
export type VerificationMode = typeof VERIFICATION_MODES[number]

export interface VerificationSettings {
  readonly mode: VerificationMode
  /** The operator's trusted header; always set unless the mode is off. */
  readonly trustRoot: TrustRoot | undefined
  readonly trustingPeriodMs: number
}

// The chain's unbonding period (gonka's genesis: unbonding_time 1814400s). A validator's
// stake can be slashed for a fork it signs only until it has unbonded: trusting a header
// for longer would let validators who have left sign a false history at no cost. CometBFT
// asks the trusting period to be below it, by a margin (its docs suggest 2/3 of it).
export const UNBONDING_PERIOD_MS = 21 * 24 * 3600 * 1000

const INT64_MAX = 2n ** 63n - 1n

/** The settings; a warning when the mode refuses most answers (strict). */
export function readVerificationSettings (settings: SettingReader<VerificationSettingKey>, warnings: string[]): VerificationSettings {
  const mode = verificationMode(settings)
  const trustingPeriodMs = settings.duration('EDGE_API_TRUSTING_PERIOD', (ms) => ms > 0 && ms < UNBONDING_PERIOD_MS
    ? undefined
    : `must be greater than 0 and below the chain's unbonding period, ${formatDuration(UNBONDING_PERIOD_MS)} (21 days): a header older than that can be forged by validators whose stake has left`)
  const height = trustHeight(settings)
  const hash = trustHash(settings)
  if (mode !== 'off') {
    if (height === undefined) throw required('EDGE_API_TRUST_HEIGHT', mode, 'the height of a header you trust, from a source other than the nodes you verify')
    if (hash === undefined) throw required('EDGE_API_TRUST_HASH', mode, 'the hash of the header at EDGE_API_TRUST_HEIGHT, 64 hex digits')
    // Only a few routes' answers can be proven (src/proven/proven-routes.ts): strict refuses
    // every other latest-state route, which an operator must know before choosing it.
    if (mode === 'strict') warnings.push('EDGE_API_VERIFICATION=strict: only the proven routes (/v1/epochs/latest, /v1/models, /v1/pricing) are served; every other latest-state /v1 route answers 503, and so does each proven one until the verified height is known (docs/verified-reads.md, "The modes")')
  }
  return { mode, trustRoot: height === undefined || hash === undefined ? undefined : { height, hash }, trustingPeriodMs }
}

function verificationMode ({ read, invalid }: SettingReader<VerificationSettingKey>): VerificationMode {
  const mode = read('EDGE_API_VERIFICATION') as VerificationMode
  if (!VERIFICATION_MODES.includes(mode)) throw invalid('EDGE_API_VERIFICATION', `must be one of ${VERIFICATION_MODES.join(', ')}`)
  return mode
}

function trustHeight ({ read, invalid }: SettingReader<VerificationSettingKey>): bigint | undefined {
  const text = read('EDGE_API_TRUST_HEIGHT')
  if (text === undefined) return undefined
  if (!/^\d{1,19}$/.test(text) || BigInt(text) < 1n || BigInt(text) > INT64_MAX) throw invalid('EDGE_API_TRUST_HEIGHT', `must be a block height from 1 to ${INT64_MAX}`)
  return BigInt(text)
}

function trustHash ({ read, invalid }: SettingReader<VerificationSettingKey>): Uint8Array | undefined {
  const text = read('EDGE_API_TRUST_HASH')
  if (text === undefined) return undefined
  if (!/^[0-9A-Fa-f]{64}$/.test(text)) throw invalid('EDGE_API_TRUST_HASH', 'must be a header hash: 64 hex digits (a block\'s block_id.hash)')
  return Buffer.from(text, 'hex')
}

function required (key: VerificationSettingKey, mode: VerificationMode, what: string): ConfigError {
  return new ConfigError(key, `${key} is required when EDGE_API_VERIFICATION=${mode}: ${what}`)
}
