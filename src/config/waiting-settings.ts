import type { SettingReader } from './setting-reader.js'

// The caps of the requests that wait for the chain (docs/waiting.md): held long-polls and
// GET /v1/events streams, counted together per client and per replica (src/waiting/wait-quota.ts).
// Read by loadConfig (src/config.ts).

export type WaitingSettingKey = 'EDGE_API_WAITING_PER_CLIENT' | 'EDGE_API_WAITING_MAX'

export interface WaitingLimits {
  /** Open at once per client (its address, src/admission/client-identity.ts). */
  readonly perClient: number
  /** Open at once on this replica. */
  readonly perReplica: number
}

// Each held request costs about 7 KB and a socket (docs/waiting.md): 100,000 of them are
// ~700 MB and most of a process's file descriptors, beyond what one replica should hold.
export const MAX_WAITING = 100_000

export function readWaitingLimits ({ integer }: SettingReader<WaitingSettingKey>): WaitingLimits {
  return {
    perClient: integer('EDGE_API_WAITING_PER_CLIENT', 1, MAX_WAITING),
    perReplica: integer('EDGE_API_WAITING_MAX', 1, MAX_WAITING)
  }
}
