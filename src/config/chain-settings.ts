import { formatByteSize } from '../byte-size.js'
import { formatDuration } from '../duration.js'
import { ConfigError } from '../errors.js'
import { positive, type SettingReader } from './setting-reader.js'

// The chain's nodes and how they are read (src/chain/): where they are, the timeout, the
// concurrency and size of reads, which nodes take latest-state reads, and hedging. Read by
// loadConfig (src/config.ts).

export type ChainSettingKey = 'CHAIN_REST_URL' | 'CHAIN_GRPC_URL' | 'EDGE_API_CHAIN_TIMEOUT' | 'EDGE_API_CHAIN_CONCURRENCY' |
  'EDGE_API_CHAIN_MAX_RESPONSE' | 'EDGE_API_MAX_NODE_LAG' | 'EDGE_API_HEAD_MAX_AGE' | 'EDGE_API_HEDGE' | 'EDGE_API_HEDGE_MIN_DELAY'

export interface ChainSettings {
  /** The nodes of one chain, in the order given; at least one. */
  readonly chainRestUrls: readonly string[]
  readonly chainTimeoutMs: number
  readonly chainConcurrency: number
  /** The largest chain answer read, in bytes; a larger one is cut off (502). */
  readonly chainMaxResponseBytes: number
  /** A node more than this many blocks behind the best head takes no latest-state reads. */
  readonly maxNodeLag: number
  /** The oldest a known chain head may be when a latest-state read starts. */
  readonly headMaxAgeMs: number
  /** The most reads hedged, as a share of reads (0–0.5); 0 = no hedging. */
  readonly hedgeBudget: number
  /** The shortest a read waits for its node before it is hedged. */
  readonly hedgeMinDelayMs: number
}

// Below 64KiB a real gateway answer (a participants page) would not fit. Above 256MiB the
// text could not become one JavaScript string (V8's limit is ~512M UTF-16 units, and a
// process holding several such answers at once would not survive anyway).
export const MIN_CHAIN_MAX_RESPONSE = 64 * 1024
export const MAX_CHAIN_MAX_RESPONSE = 256 * 1024 * 1024
// A node this many blocks behind the best head is excluded from latest-state reads; beyond
// an hour of gonka blocks (~5 s each) the setting would exclude nothing that matters.
export const MAX_NODE_LAG = 1000
export const MAX_HEAD_MAX_AGE_MS = 60_000
// Hedges beyond half of the reads would be a second copy of the traffic, not a hedge.
export const MAX_HEDGE_PERCENT = 50
// A hedge later than this rescues nothing the chain timeout would not (the delay is capped at 1 s anyway).
export const MAX_HEDGE_MIN_DELAY_MS = 10_000

/** The chain's settings; a warning when the nodes are derived from CHAIN_GRPC_URL. */
export function readChainSettings (settings: SettingReader<ChainSettingKey>, warnings: string[]): ChainSettings {
  return {
    chainRestUrls: chainRestUrls(settings, warnings),
    chainTimeoutMs: settings.duration('EDGE_API_CHAIN_TIMEOUT', positive),
    chainConcurrency: settings.integer('EDGE_API_CHAIN_CONCURRENCY', 1, 65535),
    chainMaxResponseBytes: settings.byteSize('EDGE_API_CHAIN_MAX_RESPONSE', MIN_CHAIN_MAX_RESPONSE, MAX_CHAIN_MAX_RESPONSE,
      `must be a number of bytes with an optional KiB or MiB suffix (example: 16MiB), from ${formatByteSize(MIN_CHAIN_MAX_RESPONSE)} to ${formatByteSize(MAX_CHAIN_MAX_RESPONSE)}`),
    maxNodeLag: settings.integer('EDGE_API_MAX_NODE_LAG', 0, MAX_NODE_LAG),
    headMaxAgeMs: settings.duration('EDGE_API_HEAD_MAX_AGE', (ms) => ms > 0 && ms <= MAX_HEAD_MAX_AGE_MS ? undefined : `must be greater than 0 and at most ${formatDuration(MAX_HEAD_MAX_AGE_MS)}`),
    hedgeBudget: hedgeBudget(settings),
    hedgeMinDelayMs: settings.duration('EDGE_API_HEDGE_MIN_DELAY', (ms) => ms > 0 && ms <= MAX_HEDGE_MIN_DELAY_MS ? undefined : `must be greater than 0 and at most ${formatDuration(MAX_HEDGE_MIN_DELAY_MS)}`)
  }
}

function hedgeBudget ({ read, invalid }: SettingReader<ChainSettingKey>): number {
  const hedge = read('EDGE_API_HEDGE') as string
  if (hedge === 'off') return 0
  const percent = /^\d{1,2}(\.\d{1,2})?%$/.test(hedge) ? Number(hedge.slice(0, -1)) : NaN
  if (!(percent > 0 && percent <= MAX_HEDGE_PERCENT)) {
    throw invalid('EDGE_API_HEDGE', `must be the most reads hedged as a percentage above 0 and at most ${MAX_HEDGE_PERCENT}% (example: 10%), or off`)
  }
  return percent / 100
}

function chainRestUrls ({ read, invalid }: SettingReader<ChainSettingKey>, warnings: string[]): string[] {
  const rest = read('CHAIN_REST_URL')
  const grpc = read('CHAIN_GRPC_URL')
  if (rest !== undefined) {
    const entries = rest.split(',').map((entry) => entry.trim())
    const several = entries.length > 1
    const urls = entries.map((entry) => {
      const url = baseUrl(entry)
      if (url === undefined) {
        throw invalid('CHAIN_REST_URL', 'must be an http:// or https:// base URL without query or fragment (example: http://node:1317), ' +
          `or several separated by commas (http://a:1317,http://b:1317)${several ? `; ${JSON.stringify(entry)} is not` : ''}`)
      }
      return url
    })
    const repeated = urls.find((url, i) => urls.indexOf(url) !== i)
    if (repeated !== undefined) throw invalid('CHAIN_REST_URL', `lists ${repeated} twice; each node once`)
    return urls
  }
  if (grpc === undefined) {
    throw new ConfigError('CHAIN_REST_URL', 'CHAIN_REST_URL is required (example: http://node:1317)')
  }
  // The Go service's setting: "node:9090", "dns:///node:9090" or "grpc://[::1]:9090".
  const hostPort = grpc.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '').replace(/^\/+|\/+$/g, '')
  const match = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)(?::\d+)?$/.exec(hostPort)
  if (match === null) {
    throw invalid('CHAIN_GRPC_URL', 'must be host:port (example: node:9090) to derive CHAIN_REST_URL from; or set CHAIN_REST_URL')
  }
  const derived = `http://${match[1] as string}:1317`
  warnings.push(`CHAIN_REST_URL is unset; derived ${derived} from CHAIN_GRPC_URL=${grpc}. Set CHAIN_REST_URL to override`)
  return [derived]
}

/** The normalised base URL (no trailing slash), or undefined when it is not an http(s) base URL (also EDGE_API_CHAIN_RPC_URL's entries). */
export function baseUrl (text: string): string | undefined {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    return undefined
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.search !== '' || url.hash !== '') return undefined
  return url.href.replace(/\/+$/, '')
}
