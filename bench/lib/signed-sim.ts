import { Child } from './ipc.js'
import { startMain, type MainProcess } from './servers.js'

/** What bench/children/signed-sim.ts reports when it is ready. */
export interface SignedSimReady {
  /** The nodes at the head, in CHAIN_REST_URL order. */
  readonly urls: readonly string[]
  /** A node two blocks behind them: its head is V = L − 2. */
  readonly behindUrl: string
  readonly trustHeight: number
  /** The root header's hash, 64 hex digits (EDGE_API_TRUST_HASH). */
  readonly trustHash: string
  readonly validators: number
  readonly epochLength: number
}

/** The signed chain simulator in its own process (benchmarks 20–22), its knobs over IPC. */
export interface SignedSim extends SignedSimReady {
  /** Requests under `prefix` over every node. */
  count (prefix?: string): Promise<number>
  reset (): Promise<void>
  /** A block every `ms` (0: the clock stops). */
  blockEvery (ms: number): Promise<void>
  height (): Promise<number>
  stop (): Promise<void>
}

export async function startSignedSim (validators: number, nodes: number): Promise<SignedSim> {
  const child = await Child.start<SignedSimReady>('signed-sim', [String(validators), String(nodes)])
  return {
    ...child.ready,
    count: (prefix) => child.call<number>('count', { prefix }),
    reset: () => child.call('reset'),
    blockEvery: (ms) => child.call('blockEvery', { ms }),
    height: () => child.call<number>('height'),
    stop: () => child.stop()
  }
}

/** The EDGE_API_VERIFICATION modes (docs/verified-reads.md). */
export type VerificationMode = 'off' | 'headers' | 'answers' | 'strict'

/**
 * `node dist/main.js` (or another build's `main`) over the signed simulator's nodes in `mode`,
 * from its trust root (set in every mode, so that the two sides differ in the mode alone);
 * `env` on top.
 */
export async function startVerifyingMain (sim: SignedSim, mode: VerificationMode, env: Record<string, string> = {}, main?: string): Promise<MainProcess> {
  return startMain(sim.urls.join(','), {
    EDGE_API_VERIFICATION: mode,
    EDGE_API_TRUST_HEIGHT: String(sim.trustHeight),
    EDGE_API_TRUST_HASH: sim.trustHash,
    ...env
  }, 'ignore', main)
}

/** A replica's /v1/status verification (absent with verification off). */
export interface StatusVerification {
  readonly state: string
  readonly verifiedHeight: number | null
  readonly headHeight: number | null
  readonly blocksBehind: number | null
}

export async function verificationOf (origin: string): Promise<StatusVerification | undefined> {
  const res = await fetch(`${origin}/v1/status`, { signal: AbortSignal.timeout(10_000) })
  return (await res.json() as { verification?: StatusVerification }).verification
}

/** Waits until the replica at `origin` has verified a header (V known); throws, naming it, after `timeoutMs`. */
export async function untilVerifying (origin: string, timeoutMs = 60_000): Promise<StatusVerification> {
  const deadline = performance.now() + timeoutMs
  for (;;) {
    const verification = await verificationOf(origin).catch(() => undefined)
    if (verification?.state === 'verifying' && verification.verifiedHeight !== null) return verification
    if (performance.now() > deadline) throw new Error(`${origin} not verifying after ${timeoutMs} ms: ${JSON.stringify(verification)}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

/** Waits until the simulator's head is at least `height` (polled every 20 ms; throws after `timeoutMs`). */
export async function untilHeight (sim: SignedSim, height: number, timeoutMs: number): Promise<number> {
  const deadline = performance.now() + timeoutMs
  for (;;) {
    const now = await sim.height()
    if (now >= height) return now
    if (performance.now() > deadline) throw new Error(`the simulator's head ${now} did not reach ${height} in ${timeoutMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}
