import { isIP } from 'node:net'
import { formatDuration } from '../duration.js'
import { positive, type SettingReader } from './setting-reader.js'

// Where the service listens (its port and the metrics' port) and how it leaves (the drain's
// announce window and its budget), read by loadConfig (src/config.ts).

export type ListenerSettingKey = 'EDGE_API_PORT' | 'EDGE_API_HOST' | 'EDGE_API_METRICS_PORT' | 'EDGE_API_METRICS_HOST' |
  'EDGE_API_DRAIN_ANNOUNCE' | 'EDGE_API_SHUTDOWN_BUDGET'

export interface ListenerSettings {
  readonly port: number
  readonly host: string
  /** The Prometheus listener's port (§10); undefined when EDGE_API_METRICS_PORT is off. */
  readonly metricsPort: number | undefined
  readonly metricsHost: string
  readonly drainAnnounceMs: number
  readonly shutdownBudgetMs: number
}

// The router checks /readyz every 1 s with `timeout check 3s`: it needs up to ~4 s to see
// a replica turn unready. One second of margin on top gives the smallest safe window.
export const MIN_DRAIN_ANNOUNCE_MS = 5000

export function readListenerSettings (settings: SettingReader<ListenerSettingKey>): ListenerSettings {
  const host = listenHost(settings, 'EDGE_API_HOST', settings.read('EDGE_API_HOST') as string)
  return {
    port: settings.integer('EDGE_API_PORT', 0, 65535),
    host,
    // No port 0 here: Prometheus must be told where to scrape, so the port is always a known one.
    metricsPort: settings.read('EDGE_API_METRICS_PORT') === 'off'
      ? undefined
      : settings.integer('EDGE_API_METRICS_PORT', 1, 65535, ', or off to serve no metrics'),
    metricsHost: listenHost(settings, 'EDGE_API_METRICS_HOST', settings.read('EDGE_API_METRICS_HOST') ?? host),
    drainAnnounceMs: settings.duration('EDGE_API_DRAIN_ANNOUNCE', (ms) => {
      if (ms === 0 || ms >= MIN_DRAIN_ANNOUNCE_MS) return undefined
      return `must be 0 (no balancer in front) or at least ${formatDuration(MIN_DRAIN_ANNOUNCE_MS)}: ` +
        'the router needs up to ~4s to observe the failing check (inter 1s, timeout check 3s), ' +
        'and a shorter window closes the listener while traffic still arrives'
    }),
    shutdownBudgetMs: settings.duration('EDGE_API_SHUTDOWN_BUDGET', positive)
  }
}

function listenHost (settings: SettingReader<ListenerSettingKey>, key: ListenerSettingKey, text: string): string {
  if (isIP(text) === 0 && !/^[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?$/.test(text)) {
    throw settings.invalid(key, 'must be an IP address or a host name to listen on')
  }
  return text
}
