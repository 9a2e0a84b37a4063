import { spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { PARTICIPANTS } from './chain-simulator/data/participants.js'
import { within } from './deadline.js'
import { startHeavyClient, type HeavyTotals } from './heavy-client.js'

// Issue 41's scenario, shared by its test (test/e2e/fair-share.test.ts) and benchmark 16: twenty
// polite clients (polite-clients.mjs, a process of their own, each on its own address and
// keep-alive connections, four reads a second) measure alone, then beside one heavy client
// (heavy-client.ts) started once they have.

const POLITE_CLIENTS = fileURLToPath(new URL('./polite-clients.mjs', import.meta.url))
export const POLITE = 20
const POLITE_HZ = 4

/** Every read of a phase: its status (0: no answer) and milliseconds. */
export interface Phase { readonly statuses: number[], readonly ms: number[] }

export interface PoliteBesideHeavy {
  readonly alone: Phase
  readonly beside: Phase
  readonly heavy: HeavyTotals
}

/**
 * The polite clients alone for `aloneS`, then beside a heavy client of `connections` (an
 * address of its own) for `besideS`, from a second after every heavy connection has had an
 * answer (the heavy one runs from its start until after them).
 * `onChild` is handed each child process, to be killed if the caller gives up.
 */
export async function politeBesideHeavy (origin: string, connections: number, aloneS: number, besideS: number, onChild: (kill: () => void) => void): Promise<PoliteBesideHeavy> {
  const accounts = PARTICIPANTS.map((p) => `/v1/participants/${p.address}`)
  // The polite clients are the measuring instrument: at a higher CPU priority than the rest
  // (where allowed: unprivileged, nice runs them unchanged), so that on a shared two-core host
  // what they time is the replica, not their own process waiting for a core beside the heavy
  // client's thousands of connections (which, deployed, run on other machines).
  const polite = spawn('nice', ['-n', '-10', process.execPath, POLITE_CLIENTS, origin, String(POLITE), String(POLITE_HZ), String(aloneS), String(besideS), ...accounts], { stdio: ['pipe', 'pipe', 'inherit'] })
  onChild(() => polite.kill('SIGKILL'))
  const lines = createInterface({ input: polite.stdout })[Symbol.asyncIterator]()
  const alone = JSON.parse((await within(lines.next(), 'the polite clients\' phase alone', (aloneS + 30) * 1000)).value as string) as Phase
  // Past the polite clients' end by well over a second: its thousands of connections closing at
  // once cost the replica a stall of ~100 ms (measured), which is not what is measured here.
  const heavy = startHeavyClient(origin, connections, besideS + 2.5)
  onChild(() => heavy.child.kill('SIGKILL'))
  // Measured once its connections are open and each answered: the storm of thousands of
  // connections at once is the kernel's (the replica measured idle through most of it), apart.
  await within(heavy.ready, 'every connection of the heavy client answered or turned away once', 60_000)
  polite.stdin.write('go\n')
  const beside = JSON.parse((await within(lines.next(), 'the polite clients\' phase beside the heavy one', (besideS + 30) * 1000)).value as string) as Phase
  return { alone, beside, heavy: await within(heavy.totals, 'the heavy client\'s totals', 30_000) }
}

/** The 99th percentile of `ms`. */
export function p99 (ms: readonly number[]): number {
  const sorted = [...ms].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))] as number
}

/** Issue 41's bound on the polite clients' p99 beside the heavy one: 3× alone, or alone + 30 ms. */
export function politeBound (aloneP99: number): number {
  return Math.max(3 * aloneP99, aloneP99 + 30)
}
