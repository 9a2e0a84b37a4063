// Benchmark 20: what following the chain's headers costs a replica (issue 55, phase 2), as
// deployed: `node dist/main.js` with EDGE_API_VERIFICATION=headers against the same with
// `off`, both idle over the same three nodes of the signed chain simulator (blocks at a fixed
// pace), with 100 validators (gonka's max_validators) and, for reference, the simulator's
// default set of 4. The figure is the replica's CPU time (user + system, from /proc: every
// thread, garbage collection included) per block landed, over windows of blocks measured on
// both replicas at once (each process's own CPU, so the other's work is not in it), the order
// of the readings alternating, median of the windows. An idle replica with verification off
// polls no head at all, so the difference is all that following costs: the idle head poll
// (every EDGE_API_HEAD_MAX_AGE, 1 s, to every node), the blocks' JSON, the header hashes the
// witnesses compare, one adjacent verification per block, a validator set read and hashed at
// each set change. With 100 validators, every other window has a trickle of cache hits on both
// replicas (TRICKLE_MS apart), which makes the `off` side poll the head as a serving replica
// does: the difference is then the cursor's own work. The pure verification step, in process
// (no I/O, no JSON), explains the figure: benchmark 19 measures it across a set change and a
// skip; here one adjacent header.
import { DEFAULT_TRUST_LEVEL } from '../../src/light/commit-light.js'
import type { LightBlock, LightOptions } from '../../src/light/light-block.js'
import { verifyAdjacent } from '../../src/light/verifier.js'
import { SignedChain } from '../../harness/chain-simulator/signed-chain.js'
import { DEFAULT_VALIDATORS, MAX_VALIDATORS } from '../../harness/chain-simulator/validators.js'
import type { Row, SuiteResult } from '../lib/report.js'
import { cpuMs, type MainProcess } from '../lib/servers.js'
import { startSignedSim, startVerifyingMain, untilHeight, untilVerifying, verificationOf, type SignedSim } from '../lib/signed-sim.js'
import { median, ratio, round } from '../lib/stats.js'
import type { Context } from './context.js'

/** Faster than gonka's 5–6 s, slower than the 1 s head poll: every block seen by a poll before the next lands (one adjacent step each). */
const BLOCK_MS = 2000
/** The nodes a replica follows (and that witness each other). */
const NODES = 3
const BLOCKS = '/cosmos/base/tendermint/v1beta1/blocks/'
const LATEST = `${BLOCKS}latest`
const SETS = '/cosmos/base/tendermint/v1beta1/validatorsets/'
/** The trickle: one /v1/epochs/latest (a cache hit) to each replica this often, under the 1 s head max age. */
const TRICKLE_MS = 100

interface Window { readonly trickle: boolean, readonly blocks: number, readonly headersMs: number, readonly offMs: number, readonly verified: number, readonly polls: number, readonly byHeight: number, readonly setPages: number }

export async function verifiedFollow (ctx: Context): Promise<SuiteResult> {
  const started = performance.now()
  const quick = ctx.runS < 2
  const windows = quick ? 2 : Math.max(ctx.rounds, 3)
  const blocksPerWindow = quick ? 3 : 10
  const rows: Row[] = []
  const raw: Record<string, unknown> = { blockMs: BLOCK_MS, nodes: NODES, blocksPerWindow }
  for (const validators of [MAX_VALIDATORS, DEFAULT_VALIDATORS]) {
    // With 100 validators, idle and trickle windows in turn; the default set idle only.
    const withTrickle = validators === MAX_VALIDATORS
    const measured = await follow(validators, withTrickle ? 2 * windows : windows, blocksPerWindow, withTrickle)
    const step = pureStepUs(validators, quick ? 3 : 7)
    raw[`validators${validators}`] = { windows: measured, pureStepUs: step }
    rows.push(...followRows(validators, measured.filter((w) => !w.trickle), step))
    if (withTrickle) rows.push(trickleRow(validators, measured.filter((w) => w.trickle)))
  }
  return { name: 'verified-follow', rows, raw, seconds: (performance.now() - started) / 1000 }
}

/** Both replicas over one signed simulator with `validators` per set, `windows` windows of `blocks` blocks each. */
async function follow (validators: number, windows: number, blocks: number, withTrickle: boolean): Promise<Window[]> {
  const sim = await startSignedSim(validators, NODES)
  let headers: MainProcess | undefined
  let off: MainProcess | undefined
  try {
    headers = await startVerifyingMain(sim, 'headers', { EDGE_API_CACHE_SIZE: '64MiB' })
    off = await startVerifyingMain(sim, 'off', { EDGE_API_CACHE_SIZE: '64MiB' })
    await sim.blockEvery(BLOCK_MS)
    await untilVerifying(headers.url)
    // One window first, unmeasured: the replicas' first blocks compile what later ones run.
    await measureWindow(sim, [headers, off], 2, { offFirst: false, trickle: withTrickle })
    const out: Window[] = []
    for (let i = 0; i < windows; i++) {
      const trickle = withTrickle && i % 2 === 1
      process.stderr.write(`bench 20: ${validators} validators, window ${i + 1} of ${windows}${trickle ? ' (trickle of hits)' : ''}\n`)
      out.push(await measureWindow(sim, [headers, off], blocks, { offFirst: Math.floor(i / 2) % 2 === 1, trickle }))
    }
    return out
  } finally {
    await headers?.stop()
    await off?.stop()
    await sim.stop()
  }
}

/** From just after a block lands until `blocks` more have: each replica's CPU, what the nodes were asked, how far V moved. */
async function measureWindow (sim: SignedSim, [headers, off]: readonly [MainProcess, MainProcess], blocks: number, how: { readonly offFirst: boolean, readonly trickle: boolean }): Promise<Window> {
  const start = await untilHeight(sim, await sim.height() + 1, BLOCK_MS * 5)
  const v0 = (await verificationOf(headers.url))?.verifiedHeight ?? 0
  await sim.reset()
  const read = async (): Promise<[number, number]> => how.offFirst
    ? [await cpuMs(off.pid), await cpuMs(headers.pid)].reverse() as [number, number]
    : [await cpuMs(headers.pid), await cpuMs(off.pid)]
  const stopTrickle = how.trickle ? trickle([headers.url, off.url]) : async () => {}
  const [h0, o0] = await read()
  const end = await untilHeight(sim, start + blocks, BLOCK_MS * (blocks + 5))
  const [h1, o1] = await read()
  await stopTrickle()
  const [polls, all, setPages] = [await sim.count(LATEST), await sim.count(BLOCKS), await sim.count(SETS)]
  const v1 = (await verificationOf(headers.url))?.verifiedHeight ?? 0
  const landed = end - start
  return { trickle: how.trickle, blocks: landed, headersMs: (h1 - h0) / landed, offMs: (o1 - o0) / landed, verified: v1 - v0, polls: polls / landed, byHeight: (all - polls) / landed, setPages: setPages / landed }
}

/** One /v1/epochs/latest to each origin every TRICKLE_MS until the returned function is called (and the last ones answered). */
function trickle (origins: readonly string[]): () => Promise<void> {
  const inFlight = new Set<Promise<void>>()
  const timer = setInterval(() => {
    for (const origin of origins) {
      const sent: Promise<void> = fetch(`${origin}/v1/epochs/latest`, { signal: AbortSignal.timeout(10_000) })
        .then(async (res) => { await res.arrayBuffer() }, () => {})
        .finally(() => inFlight.delete(sent))
      inFlight.add(sent)
    }
  }, TRICKLE_MS)
  return async () => {
    clearInterval(timer)
    await Promise.all(inFlight)
  }
}

function trickleRow (validators: number, windows: readonly Window[]): Row {
  const headersMs = median(windows.map((w) => w.headersMs))
  const offMs = median(windows.map((w) => w.offMs))
  return {
    item: '20',
    what: `… the same replicas serving a trickle of cache hits (/v1/epochs/latest to each every ${TRICKLE_MS} ms, so both poll the head), ${validators} validators: CPU per block, headers / off, median of ${windows.length} windows alternating with the idle ones (per window, headers − off: ${windows.map((w) => round(w.headersMs - w.offMs, 1)).join(', ')} ms; head polls per block, both replicas: ${round(median(windows.map((w) => w.polls)), 2)})`,
    value: `${round(headersMs, 2)} ms / ${round(offMs, 2)} ms: +${round(headersMs - offMs, 2)} ms per block, the cursor's own work`,
    goal: 'reported',
    met: null
  }
}

function followRows (validators: number, windows: readonly Window[], stepUs: number): Row[] {
  const headersMs = median(windows.map((w) => w.headersMs))
  const offMs = median(windows.map((w) => w.offMs))
  const blocks = windows.reduce((n, w) => n + w.blocks, 0)
  const verified = windows.reduce((n, w) => n + w.verified, 0)
  const added = headersMs - offMs
  const per = (pick: (w: Window) => number): number => round(median(windows.map(pick)), 2)
  const label = `${validators} validators${validators === DEFAULT_VALIDATORS ? ' (the simulator\'s default set)' : ''}`
  return [{
    item: '20',
    what: `following headers, ${label}, ${NODES} nodes, a block every ${BLOCK_MS / 1000} s, replicas idle: dist/main.js's CPU time (/proc) per block, EDGE_API_VERIFICATION=headers / off, median of ${windows.length} windows measured on both at once (per window, headers: ${windows.map((w) => round(w.headersMs, 1)).join(', ')} ms)`,
    value: `${round(headersMs, 2)} ms / ${round(offMs, 2)} ms: +${round(added, 2)} ms per block (${round(added / BLOCK_MS * 100, 2)}% of a core at this pace)`,
    goal: 'reported',
    met: null
  }, {
    item: '20',
    what: `… what the headers side did per block (medians): head polls (blocks/latest over ${NODES} nodes), blocks read by height, validator-set pages read; V advanced ${verified} in ${blocks} blocks landed`,
    value: `${per((w) => w.polls)} polls, ${per((w) => w.byHeight)} by height, ${per((w) => w.setPages)} set pages`,
    goal: 'V keeps up (advanced = landed)',
    met: verified >= blocks - windows.length
  }, {
    item: '20',
    what: `… of which the pure verification step, in process: one adjacent header with ${validators} signatures (verifyAdjacent: set hashes, header hash, signatures past 2/3), CPU, median of runs`,
    value: `${round(stepUs / 1000, 2)} ms (${ratio(stepUs / 1000 / Math.max(added, 1e-9))} of the added CPU per block)`,
    goal: 'reported',
    met: null
  }]
}

const OPTIONS: LightOptions = { trustingPeriodMs: 14 * 24 * 3600 * 1000, maxClockDriftMs: 10_000, trustLevel: DEFAULT_TRUST_LEVEL, linkLastBlockId: true }

/** CPU µs of verifying one adjacent header within an epoch, with `validators` per set: the median of `runs` runs over the same 10 headers. */
function pureStepUs (validators: number, runs: number): number {
  const chain = new SignedChain({ validators, epochLength: 1000 })
  const first = chain.firstHeight + 1
  const block = (height: number): LightBlock => {
    const { header, commit } = chain.block(height)
    return { signedHeader: { header, commit }, validators: chain.validatorSet(height), nextValidators: chain.validatorSet(height + 1) }
  }
  const blocks = Array.from({ length: 11 }, (_, i) => block(first + i))
  const now = { seconds: Math.floor(Date.now() / 1000), nanos: 0 }
  const step = (i: number): void => {
    const trusted = blocks[i] as LightBlock
    const verdict = verifyAdjacent({ header: trusted.signedHeader.header, nextValidators: trusted.nextValidators }, blocks[i + 1] as LightBlock, now, OPTIONS)
    if (!verdict.ok) throw new Error(`header ${first + i + 1} does not verify: ${JSON.stringify(verdict)}`)
  }
  step(0) // the keys imported once, as a following replica has them
  const perStep: number[] = []
  for (let r = 0; r < runs; r++) {
    const before = process.cpuUsage()
    for (let i = 0; i < 10; i++) step(i)
    const used = process.cpuUsage(before)
    perStep.push((used.user + used.system) / 10)
  }
  return median(perStep)
}
