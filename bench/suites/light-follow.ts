// Benchmark 19: the CPU a replica spends to follow the chain as a light client (issue 55,
// phase 2's cursor): one block of following headers verified with src/light against the
// signed chain simulator's 100-validator chain. Side by side, the steps a cursor takes:
// adjacent within an epoch (the usual block: two set hashes, the header hash, signatures
// until past 2/3), adjacent at a set change (the same work; the new set was named a block
// ahead), and a skip across a set change after a gap (the 1/3 trusting tally on top).
// Verification off costs nothing here: the head poll only reads the height.
// In process, CPU time (user + system) per verified block, median of the rounds.
import { DEFAULT_TRUST_LEVEL } from '../../src/light/commit-light.js'
import type { LightBlock, LightOptions, TrustedState } from '../../src/light/light-block.js'
import { verifyLightBlock } from '../../src/light/verifier.js'
import { POC_START } from '../../harness/chain-simulator/data/epochs.js'
import { SignedChain } from '../../harness/chain-simulator/signed-chain.js'
import { MAX_VALIDATORS } from '../../harness/chain-simulator/validators.js'
import type { Row, SuiteResult } from '../lib/report.js'
import { median, round } from '../lib/stats.js'
import type { Context } from './context.js'

const EPOCH = 20
/** Heights verified per round, adjacent: five epochs, so four of them are set changes. */
const FOLLOWED = 5 * EPOCH
const OPTIONS: LightOptions = { trustingPeriodMs: 14 * 24 * 3600 * 1000, maxClockDriftMs: 10_000, trustLevel: DEFAULT_TRUST_LEVEL, linkLastBlockId: true }

export async function lightFollow (ctx: Context): Promise<SuiteResult> {
  const started = performance.now()
  const first = POC_START + 5 * EPOCH
  const chain = new SignedChain({ validators: MAX_VALIDATORS, epochLength: EPOCH, firstHeight: first })
  const lightBlock = (height: number): LightBlock => {
    const { header, commit } = chain.block(height)
    return { signedHeader: { header, commit }, validators: chain.validatorSet(height), nextValidators: chain.validatorSet(height + 1) }
  }
  const blocks = Array.from({ length: FOLLOWED + 1 }, (_, i) => lightBlock(first + 1 + i))
  const now = { seconds: Math.floor(Date.now() / 1000), nanos: 0 }
  const stateOf = (b: LightBlock): TrustedState => ({ header: b.signedHeader.header, nextValidators: b.nextValidators })
  const cpuUs = (run: () => void): number => {
    const before = process.cpuUsage()
    run()
    const used = process.cpuUsage(before)
    return used.user + used.system
  }
  const check = (trusted: TrustedState, untrusted: LightBlock): void => {
    const verdict = verifyLightBlock(trusted, untrusted, now, OPTIONS)
    if (!verdict.ok) throw new Error(`height ${untrusted.signedHeader.header.height}: ${verdict.reason}`)
  }
  const changes = blocks.slice(1).map((b, i) => [blocks[i] as LightBlock, b] as const)
    .filter(([a, b]) => Buffer.compare(a.signedHeader.header.validatorsHash, b.signedHeader.header.validatorsHash) !== 0)
  const within = blocks.slice(1).map((b, i) => [blocks[i] as LightBlock, b] as const)
    .filter(([a, b]) => Buffer.compare(a.signedHeader.header.validatorsHash, b.signedHeader.header.validatorsHash) === 0)
  // A skip of 15 heights across one change: the trusted block 10 before it, the target 5 after.
  const skips = changes.map(([, b]) => {
    const at = Number(b.signedHeader.header.height) - (first + 1)
    return [blocks[at - 10] as LightBlock, blocks[at + 5] as LightBlock] as const
  }).filter(([a, b]) => a !== undefined && b !== undefined)
  const rounds = Math.max(ctx.rounds, 3)
  const perBlock = { within: [] as number[], change: [] as number[], skip: [] as number[] }
  check(stateOf(blocks[0] as LightBlock), blocks[1] as LightBlock) // imports the first keys
  for (let r = 0; r < rounds; r++) {
    perBlock.within.push(cpuUs(() => { for (const [a, b] of within) check(stateOf(a), b) }) / within.length)
    perBlock.change.push(cpuUs(() => { for (const [a, b] of changes) check(stateOf(a), b) }) / changes.length)
    perBlock.skip.push(cpuUs(() => { for (const [a, b] of skips) check(stateOf(a), b) }) / skips.length)
  }
  const cpu = (values: number[]): string => `${round(median(values) / 1000, 2)} ms CPU`
  const rows: Row[] = [
    { item: '19', what: `following headers, ${MAX_VALIDATORS} validators: one adjacent block within an epoch (${within.length} per round, median of ${rounds}; verification off: 0)`, value: cpu(perBlock.within), goal: 'informational', met: null },
    { item: '19', what: `… one adjacent block at a validator-set change (${changes.length} per round)`, value: cpu(perBlock.change), goal: 'informational', met: null },
    { item: '19', what: `… one skip of 15 heights across a set change (1/3 trusting tally + 2/3 of the new set; ${skips.length} per round)`, value: cpu(perBlock.skip), goal: 'informational', met: null }
  ]
  return { name: 'light-follow', rows, raw: { perBlockUs: perBlock, validators: MAX_VALIDATORS, epochLength: EPOCH }, seconds: (performance.now() - started) / 1000 }
}
