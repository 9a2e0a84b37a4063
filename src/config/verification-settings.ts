import { formatDuration } from '../duration.js'
import { ConfigError } from '../errors.js'
import type { TrustRoot } from '../light/trust-root.js'
import { baseUrl } from './chain-settings.js'
import type { SettingReader } from './setting-reader.js'

// Verified reads (docs/verified-reads.md): the mode, the trust root the light client starts
// from, how long a verified header vouches for what follows it, and each node's CometBFT RPC
// endpoint, where the newest header's commit can be read (V = L - 1). Read by loadConfig
// (src/config.ts). Boot checks the root's presence and form only: whether it has expired
// depends on its header's time, known once the header is fetched, so the light client
// refuses an expired root on first contact (src/light/trust-root.ts), naming the variables.

export type VerificationSettingKey = 'EDGE_API_VERIFICATION' | 'EDGE_API_TRUST_HEIGHT' | 'EDGE_API_TRUST_HASH' | 'EDGE_API_TRUSTING_PERIOD' | 'EDGE_API_CHAIN_RPC_URL'

/** off: as before; headers: follow the chain as a light client; answers: also prove single-key answers; strict: serve only proven answers. */
export const VERIFICATION_MODES = ['off', 'headers', 'answers', 'strict'] as const
export type VerificationMode = typeof VERIFICATION_MODES[number]

export interface VerificationSettings {
  readonly mode: VerificationMode
  /** The operator's trusted header; always set unless the mode is off. */
  readonly trustRoot: TrustRoot | undefined
  readonly trustingPeriodMs: number
  /**
   * Each node's CometBFT RPC base URL, by CHAIN_REST_URL's order (undefined: that node has
   * none, and its headers are read from its REST gateway); undefined when none is set.
   */
  readonly rpcUrls: ReadonlyArray<string | undefined> | undefined
}

// The chain's unbonding period (gonka's genesis: unbonding_time 1814400s). A validator's
// stake can be slashed for a fork it signs only until it has unbonded: trusting a header
// for longer would let validators who have left sign a false history at no cost. CometBFT
// asks the trusting period to be below it, by a margin (its docs suggest 2/3 of it).
export const UNBONDING_PERIOD_MS = 21 * 24 * 3600 * 1000

const INT64_MAX = 2n ** 63n - 1n

/** The settings, for `nodeCount` nodes (CHAIN_REST_URL's); a warning when the mode refuses most answers (strict), or an RPC URL goes unused. */
export function readVerificationSettings (settings: SettingReader<VerificationSettingKey>, warnings: string[], nodeCount: number): VerificationSettings {
  const mode = verificationMode(settings)
  const rpcUrls = chainRpcUrls(settings, nodeCount)
  if (rpcUrls !== undefined && mode === 'off') warnings.push('EDGE_API_CHAIN_RPC_URL is set but EDGE_API_VERIFICATION=off: only the verified-height cursor reads it, so it is not used')
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
  return { mode, trustRoot: height === undefined || hash === undefined ? undefined : { height, hash }, trustingPeriodMs, rpcUrls }
}

/**
 * EDGE_API_CHAIN_RPC_URL: one entry per CHAIN_REST_URL node, in its order, each a CometBFT
 * RPC base URL (http://node:26657) or empty for a node whose RPC edge-api cannot reach. The
 * positions pair them: a node's RPC that lies is that node lying (src/light/cursor.ts).
 */
function chainRpcUrls ({ read, invalid }: SettingReader<VerificationSettingKey>, nodeCount: number): Array<string | undefined> | undefined {
  const text = read('EDGE_API_CHAIN_RPC_URL')
  if (text === undefined) return undefined
  const entries = text.split(',').map((entry) => entry.trim())
  const form = 'one CometBFT RPC base URL per CHAIN_REST_URL node, in the same order, separated by commas (http://a:26657,http://b:26657), an entry left empty for a node without one'
  if (entries.length !== nodeCount) throw invalid('EDGE_API_CHAIN_RPC_URL', `must be ${form}; it has ${entries.length} entries for ${nodeCount} node${nodeCount === 1 ? '' : 's'}`)
  const urls = entries.map((entry) => {
    if (entry === '') return undefined
    const url = baseUrl(entry)
    if (url === undefined) throw invalid('EDGE_API_CHAIN_RPC_URL', `must be ${form}; ${JSON.stringify(entry)} is not an http:// or https:// base URL without query or fragment`)
    return url
  })
  if (urls.every((url) => url === undefined)) throw invalid('EDGE_API_CHAIN_RPC_URL', `must be ${form}, at least one not empty; unset it for none`)
  const repeated = urls.find((url, i) => url !== undefined && urls.indexOf(url) !== i)
  if (repeated !== undefined) throw invalid('EDGE_API_CHAIN_RPC_URL', `lists ${repeated} twice; each node has its own`)
  return urls
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
