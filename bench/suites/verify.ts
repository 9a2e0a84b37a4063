// Benchmark 8: the optional verify routes' CPU work must not starve the service.
// First, in this process: one 100-validator commit verified through node:crypto (what the
// service uses) against @noble/curves alone, and the longest the event loop is held while
// one is verified on it and while one is verified in the worker thread (the service's way).
// Then, over HTTP against dist/main.js with the routes
// exposed: /readyz and a Tier A read at fixed rates, side by side with and without a
// background of clients verifying a real 100-validator commit (/v1/debug/verify/{height},
// closed loop, more clients than the admission limit lets run).
import { setTimeout as sleep } from 'node:timers/promises'
import { ed25519 } from '@noble/curves/ed25519.js'
import { request } from 'undici'
import { decodeBlockJson } from '../../src/cometbft/block-json.js'
import { PRECOMMIT_TYPE, voteSignBytes } from '../../src/cometbft/sign-bytes.js'
import type { Commit } from '../../src/cometbft/types.js'
import { newValidatorSet } from '../../src/cometbft/validator-set.js'
import { verifyCommit } from '../../src/verify/verify-commit.js'
import { HUNDRED_COMMIT_BLOCK, setAt, signedBlockAnswer } from '../../harness/chain-simulator/data/commits.js'
import { PARTICIPANTS } from '../../harness/chain-simulator/data/participants.js'
import type { LoadResult } from '../lib/load.js'
import type { Row, SuiteResult } from '../lib/report.js'
import { startMain } from '../lib/servers.js'
import { median, ms, ratio, round } from '../lib/stats.js'
import type { Context } from './context.js'

const READYZ_RATE = 200
const READ_RATE = 500
const READ_CONNECTIONS = 4
/** More than the route group's 2 running + 16 queued would shed; 8 keeps it busy without shedding. */
const VERIFY_CONNECTIONS = 8
const IN_PROCESS_RUNS = 7

export async function verify (ctx: Context): Promise<SuiteResult> {
  const started = performance.now()
  const rows: Row[] = []
  const raw: Record<string, unknown> = {}

  // 1. In process: node:crypto against noble, and the event-loop hold.
  const block = decodeBlockJson((signedBlockAnswer(HUNDRED_COMMIT_BLOCK) as { sdk_block: unknown }).sdk_block)
  const commit = block.lastCommit as Commit
  const set = newValidatorSet(setAt(HUNDRED_COMMIT_BLOCK - 1).map((v) => ({ pubKey: v.pubKey, votingPower: v.power })))
  const timeOf = async (run: () => Promise<void> | void): Promise<number> => {
    const t0 = performance.now()
    await run()
    return performance.now() - t0
  }
  const native = (): void => { verifyCommit(block.chainId, commit, block.height, set) }
  const noble = (): void => {
    commit.signatures.forEach((sig, i) => {
      const message = voteSignBytes({ type: PRECOMMIT_TYPE, height: commit.height, round: commit.round, blockId: commit.blockId, timestamp: sig.timestamp, chainId: block.chainId })
      if (!ed25519.verify(sig.signature, message, set.validators[i]?.pubKey as Uint8Array, { zip215: true })) throw new Error('noble rejected a good signature')
    })
  }
  const cold = await timeOf(native) // imports the 100 keys
  const nativeMs: number[] = []
  const nobleMs: number[] = []
  for (let i = 0; i < IN_PROCESS_RUNS; i++) {
    nativeMs.push(await timeOf(native))
    if (i < 3) nobleMs.push(await timeOf(noble))
  }
  // The worker thread loads built JavaScript: tsx (which runs the bench) does not reach into worker threads.
  const { checkCommitInWorker } = await import(new URL('../../dist/verify/workers.js', import.meta.url).href) as typeof import('../../src/verify/workers.js')
  const holds = { inline: [] as number[], worker: [] as number[] }
  const task = { chainId: block.chainId, commit, height: block.height, validators: set.validators }
  const taskOptions = { timeLimitMs: 60_000, signal: new AbortController().signal }
  await checkCommitInWorker(task, taskOptions) // starts the thread
  for (let i = 0; i < IN_PROCESS_RUNS; i++) {
    holds.inline.push(await longestHold(async () => { native() }))
    holds.worker.push(await longestHold(async () => {
      const outcome = await checkCommitInWorker(task, taskOptions)
      if (!outcome.ok) throw new Error(outcome.error)
    }))
  }
  raw.inProcess = { coldMs: cold, nativeMs, nobleMs, holdsMs: holds }
  const nativeMedian = median(nativeMs)
  const nobleMedian = median(nobleMs)
  const hold = { inline: median(holds.inline), worker: median(holds.worker) }
  const worst = { inline: Math.max(...holds.inline), worker: Math.max(...holds.worker) }
  rows.push({
    item: '8',
    what: `one 100-validator commit verified in process: node:crypto (the service's path) / @noble/curves only (median of ${IN_PROCESS_RUNS} and 3; first run, importing the keys: ${ms(cold)})`,
    value: `${ms(nativeMedian)} / ${ms(nobleMedian)} = ${ratio(nativeMedian / nobleMedian)}`,
    goal: 'reported (decides node:crypto)',
    met: null
  }, {
    item: '8',
    what: `longest event-loop hold while one 100-validator commit is verified: in the worker thread (the service) / on the event loop; median of ${IN_PROCESS_RUNS} (worst ${ms(worst.worker)} / ${ms(worst.inline)})`,
    value: `${ms(hold.worker)} / ${ms(hold.inline)}`,
    goal: '≤ 20 ms in the worker',
    met: hold.worker <= 20
  })

  // 2. Over HTTP: reads with and without verifications running.
  const edge = await startMain(ctx.sim.url, { EDGE_API_EXPOSE_OPTIONAL_ROUTES: 'true' })
  try {
    const verifyUrl = `${edge.url}/v1/debug/verify/${HUNDRED_COMMIT_BLOCK}`
    const check = await request(verifyUrl)
    const answer = await check.body.text()
    if (check.statusCode !== 200) throw new Error(`${verifyUrl} answered ${check.statusCode} ${answer}`)
    const readyz = { url: `${edge.url}/readyz`, connections: READ_CONNECTIONS, overallRate: READYZ_RATE }
    const tierA = { url: `${edge.url}/v1/participants/${PARTICIPANTS[1].address}`, connections: READ_CONNECTIONS, overallRate: READ_RATE }
    const phases: Record<'with' | 'without', { readyz: LoadResult[], tierA: LoadResult[], verify: LoadResult[] }> = {
      with: { readyz: [], tierA: [], verify: [] },
      without: { readyz: [], tierA: [], verify: [] }
    }
    for (let round = 0; round < ctx.rounds; round++) {
      const order: Array<'with' | 'without'> = round % 2 === 0 ? ['with', 'without'] : ['without', 'with']
      for (const phase of order) {
        await Promise.all([ctx.load.run({ ...readyz, durationS: ctx.warmupS }), ctx.load.run({ ...tierA, durationS: ctx.warmupS })])
        let background: Promise<LoadResult> | undefined
        if (phase === 'with') {
          // Runs past both ends of the measured window, so the reads never see it ramp up or down.
          background = ctx.load.run({ url: verifyUrl, connections: VERIFY_CONNECTIONS, durationS: ctx.runS + 1 })
          await sleep(400)
        }
        const [r, a] = await Promise.all([ctx.load.run({ ...readyz, durationS: ctx.runS }), ctx.load.run({ ...tierA, durationS: ctx.runS })])
        phases[phase].readyz.push(r)
        phases[phase].tierA.push(a)
        if (background !== undefined) phases[phase].verify.push(await background)
      }
    }
    raw.http = { server: edge.label, readyzRate: READYZ_RATE, readRate: READ_RATE, verifyConnections: VERIFY_CONNECTIONS, phases }
    const pick = (runs: LoadResult[], f: (r: LoadResult) => number): number => median(runs.map(f))
    const shed = (runs: LoadResult[]): string => `${round(pick(runs, (r) => r.non2xx / Math.max(1, r.requests)) * 100, 1)}%`
    for (const [name, key, rate] of [['GET /readyz', 'readyz', READYZ_RATE], ['GET /v1/participants/{address} (Tier A)', 'tierA', READ_RATE]] as const) {
      const withRuns = phases.with[key]
      const withoutRuns = phases.without[key]
      const p99 = { with: pick(withRuns, (r) => r.p99), without: pick(withoutRuns, (r) => r.p99) }
      const p50 = { with: pick(withRuns, (r) => r.p50), without: pick(withoutRuns, (r) => r.p50) }
      rows.push({
        item: '8',
        what: `${name} p99 at ${rate} req/s: while 100-validator commits are verified / without (p50 ${ms(p50.with)} / ${ms(p50.without)}; non-2xx ${shed(withRuns)} / ${shed(withoutRuns)})`,
        value: `${ms(p99.with)} / ${ms(p99.without)} = ${ratio(p99.with / p99.without)}`,
        goal: '≤ 2× (a shared machine: the ratio, not the absolute)',
        met: p99.with <= 2 * p99.without
      })
    }
    const verifyRuns = phases.with.verify
    rows.push({
      item: '8',
      what: `meanwhile, ${VERIFY_CONNECTIONS} clients verifying the 100-validator commit of block ${HUNDRED_COMMIT_BLOCK} (2 run at once, the rest queue): verified/s, p50 (non-2xx)`,
      value: `${round(pick(verifyRuns, (r) => r.rps), 1)}/s, p50 ${ms(pick(verifyRuns, (r) => r.p50))} (${shed(verifyRuns)})`,
      goal: 'reported',
      met: null
    })
  } finally {
    await edge.stop()
  }
  return { name: 'verify', rows, raw, seconds: (performance.now() - started) / 1000 }
}

/** The longest stretch `work` holds the event loop: the widest gap between two turns while it runs. */
async function longestHold (work: () => Promise<void>): Promise<number> {
  let last = performance.now()
  let widest = 0
  const state = { running: true }
  const ticking = (async () => {
    while (state.running) {
      await new Promise((resolve) => setImmediate(resolve))
      const now = performance.now()
      widest = Math.max(widest, now - last)
      last = now
    }
  })()
  await work()
  widest = Math.max(widest, performance.now() - last)
  state.running = false
  await ticking
  return widest
}
