import t, { type Test } from 'tap'
import type { Timestamp } from '../../src/cometbft/timestamp.js'
import { APP_HASH_WINDOW, NODE_LYING, timestampOfMs, VerifiedCursor, type CursorOptions } from '../../src/light/cursor.js'
import type { VerifiedAppHashes } from '../../src/proven/app-hashes.js'
import { followerOptions } from '../../src/light/light-block.js'
import { LightReader } from '../../src/light/light-reader.js'
import { BlockClock } from '../../harness/chain-simulator/block-clock.js'
import { SignedChain } from '../../harness/chain-simulator/signed-chain.js'
import { startChainSimulator, type ChainSimulator } from '../../harness/chain-simulator/simulator.js'
import { getJson } from '../fixtures/light/gateway-blocks.js'

// The cursor alone, over real sockets to two nodes of a signed simulated chain, told their
// latest blocks by the test as the head poll would: an expired root or trusted header, a
// root no node serves, a gap the limits do not let it bisect, answers it cannot read.

const PERIOD_MS = 14 * 24 * 3600 * 1000
const LATEST = '/cosmos/base/tendermint/v1beta1/blocks/latest'

interface Line { level: string, fields: Record<string, unknown>, msg: string }

async function setup (t: Test, overrides: Partial<CursorOptions> & { rootHash?: Uint8Array } = {}): Promise<{ cursor: VerifiedCursor, nodes: ChainSimulator[], clock: BlockClock, lines: Line[], lying: number[], tell: (node: number) => Promise<void> }> {
  const clock = new BlockClock()
  const chain = new SignedChain()
  const nodes = [await startChainSimulator(0, { clock, chain }), await startChainSimulator(0, { clock, chain })]
  t.teardown(async () => { await Promise.all(nodes.map(async (n) => await n.close())) })
  const lines: Line[] = []
  const lying: number[] = []
  const line = (level: string) => (fields: object, msg: string): void => { lines.push({ level, fields: fields as Record<string, unknown>, msg }) }
  const rootHeight = BigInt(clock.height - 5)
  const cursor = new VerifiedCursor({
    nodeCount: 2,
    urls: nodes.map((n) => n.url),
    root: { height: rootHeight, hash: overrides.rootHash ?? chain.block(Number(rootHeight)).blockId.hash },
    light: followerOptions(PERIOD_MS),
    reader: new LightReader(async (node, path) => getJson(`${(nodes[node] as ChainSimulator).url}${path}`)),
    now: () => nowTime(),
    log: { info: line('info'), warn: line('warn'), error: line('error') },
    onLying: (node) => { lying.push(node) },
    ...overrides
  })
  const tell = async (node: number): Promise<void> => {
    cursor.told(node, await getJson(`${(nodes[node] as ChainSimulator).url}${LATEST}`))
    await cursor.settled()
  }
  return { cursor, nodes, clock, lines, lying, tell }
}

const nowTime = (offsetMs = 0): Timestamp => ({ seconds: Math.floor((Date.now() + offsetMs) / 1000), nanos: 0 })

t.test('follows from the root; a block told again, or a node behind, changes nothing', async (t) => {
  const { cursor, clock, tell, lines, nodes } = await setup(t)
  t.equal(cursor.state, 'starting')
  t.equal(cursor.height, undefined)
  await tell(0)
  t.equal(cursor.state, 'verifying')
  t.equal(cursor.height, clock.height - 2, 'V = L - 2')
  ;(nodes[1] as ChainSimulator).lag = 3
  await tell(1)
  await tell(0)
  t.equal(cursor.height, clock.height - 2)
  t.same(lines.map((l) => l.level), ['info'], 'one line: verifying from the root')
})

t.test('a root no node serves the hash of: each node that serves it is lying, nothing verified', async (t) => {
  const { cursor, tell, lines, lying } = await setup(t, { rootHash: Buffer.alloc(32, 7) })
  await tell(0)
  await tell(1)
  await tell(0)
  t.same(lying, [0, 1])
  t.equal(lines.filter((l) => l.msg === NODE_LYING).length, 2, 'one line per node')
  t.match(lines[0], { level: 'error', fields: { height: /^\d+$/, reason: /not the trust root's EDGE_API_TRUST_HASH/ } })
  t.equal(cursor.height, undefined)
  t.equal(cursor.lying(0), true)
})

t.test('an expired root stops the cursor with one error line naming the variables', async (t) => {
  const { cursor, tell, lines } = await setup(t, { now: () => nowTime(PERIOD_MS) })
  await tell(0)
  await tell(1)
  t.equal(cursor.state, 'expired')
  t.equal(lines.length, 1)
  t.match(lines[0], { level: 'error', msg: /EDGE_API_TRUST_HEIGHT and EDGE_API_TRUST_HASH/, fields: { reason: /the trust root has expired/ } })
})

t.test('a trusted header that expires while following stops the cursor', async (t) => {
  let offsetMs = 0
  const { cursor, tell, lines, clock } = await setup(t, { now: () => nowTime(offsetMs) })
  await tell(0)
  const verified = cursor.height
  offsetMs = PERIOD_MS
  clock.advance()
  await tell(0)
  t.equal(cursor.state, 'expired')
  t.equal(cursor.height, verified, 'V stays where it was')
  t.match(lines.at(-1), { level: 'error', fields: { reason: /old header has expired/ } })
})

t.test('a gap the limits do not let it bisect: a warn line, V where it got to, no node lying', async (t) => {
  const { cursor, tell, lines, clock, lying } = await setup(t, { limits: { maxFetches: 10, maxSteps: 1 } })
  await tell(0)
  const before = cursor.height as number
  // Four set changes (every 20 blocks): a quarter of the trusted power signs, not a third.
  clock.advance(80)
  await tell(0)
  t.equal(cursor.height, before, 'not advanced')
  t.match(lines.at(-1), { level: 'warn', fields: { reason: 'bisection gave up after 1 verification steps' } })
  t.same(lying, [])
})

t.test('answers it cannot read, and a node that cannot serve the blocks: one warn line each, until it does', async (t) => {
  const { cursor, tell, lines, nodes, clock } = await setup(t)
  cursor.told(1, { block: null })
  cursor.told(1, 'not a block')
  t.equal(lines.length, 1)
  t.match(lines[0], { level: 'warn', fields: { err: 'block: must be an object' } })
  await tell(0)
  clock.advance(3)
  await (nodes[0] as ChainSimulator).refuse()
  cursor.told(0, await getJson(`${(nodes[1] as ChainSimulator).url}${LATEST}`))
  await cursor.settled()
  cursor.told(0, await getJson(`${(nodes[1] as ChainSimulator).url}${LATEST}`))
  await cursor.settled()
  t.equal(lines.filter((l) => l.level === 'warn').length, 2, 'one more line for node 1\'s failed reads')
  await (nodes[0] as ChainSimulator).restore()
  await tell(0)
  t.equal(cursor.height, clock.height - 2, 'followed again once it answers')
})

t.test('a witness: a node whose header, or the previous one it names, is not the one verified is lying before anything is verified from it', async (t) => {
  const { cursor, tell, lines, nodes, clock, lying } = await setup(t)
  await tell(0)
  const liar = nodes[1] as ChainSimulator
  // Behind by one, its latest header is one already verified, with a forged app hash.
  liar.lag = 1
  liar.lies.forgedAppHashFrom = clock.height - 1
  await tell(1)
  t.same(lying, [1])
  t.match(lines.at(-1), { level: 'error', msg: NODE_LYING, fields: { height: String(clock.height - 1), reason: /not the one verified at this height from another node/ } })
  t.equal(cursor.height, clock.height - 2)
})

t.test('a witness: a fork from the verified height names another previous block', async (t) => {
  const { tell, lines, nodes, clock, lying } = await setup(t)
  await tell(0)
  const liar = nodes[1] as ChainSimulator
  // Its latest header is not verified yet; the one it names as previous (verified) is its fork's.
  liar.lies.forkFrom = clock.height - 1
  await tell(1)
  t.same(lying, [1])
  t.match(lines.at(-1), { level: 'error', fields: { height: String(clock.height) } })
})

t.test('a witness: a node that told a forged header is named once another node\'s header at its height is verified', async (t) => {
  const { tell, lines, nodes, clock, lying, cursor } = await setup(t)
  await tell(0)
  const liar = nodes[1] as ChainSimulator
  liar.lies.forgedAppHashFrom = clock.height
  await tell(1)
  t.same(lying, [], 'its header at the head is not verified by anyone yet')
  clock.advance()
  await tell(0)
  t.same(lying, [1])
  t.match(lines.at(-1), { level: 'error', fields: { height: String(clock.height - 1), reason: 'its header is not the one verified at this height' } })
  t.equal(cursor.height, clock.height - 2)
})

t.test('a node whose header does not verify is lying; a header without a validators hash is no witness to anything', async (t) => {
  const { tell, lines, nodes, clock, lying, cursor } = await setup(t)
  await tell(0)
  clock.advance()
  const liar = nodes[1] as ChainSimulator
  liar.lies.forgedAppHashFrom = clock.height - 1
  await tell(1)
  t.same(lying, [1])
  t.match(lines.at(-1), { level: 'error', fields: { height: String(clock.height - 1), reason: /commit signs block/ } })
  const honest = await getJson(`${(nodes[0] as ChainSimulator).url}${LATEST}`)
  honest.block.header.validators_hash = null
  cursor.told(0, honest)
  await cursor.settled()
  t.equal(cursor.height, clock.height - 2, 'the commit it carries for the block below still verifies that block')
})

t.test('the wall clock as a header time', async (t) => {
  t.same(timestampOfMs(1_500), { seconds: 1, nanos: 500_000_000 })
})

t.test('the app hashes of verified headers: the state after V is header V + 1\'s, kept for a bounded window', async (t) => {
  const { cursor, clock, tell } = await setup(t)
  const chain = new SignedChain()
  t.equal(cursor.appHashAfter(clock.height - 2), undefined, 'nothing before a header is verified')
  await tell(0)
  const skippedTo = cursor.height as number
  t.equal(cursor.appHashAfter(skippedTo - 1), undefined, 'a height skipped over from the root is not verified')
  clock.advance()
  await tell(0)
  const v = cursor.height as number
  t.same(cursor.appHashAfter(v), chain.appHashOf(v + 1), 'V: header V + 1\'s app hash')
  t.same(cursor.appHashAfter(v - 1), chain.appHashOf(v), 'the state before it, verified a block earlier')
  t.equal(cursor.appHashAfter(v + 1), undefined, 'header V + 2 is not verified yet')
  const hashes: VerifiedAppHashes = cursor
  t.same(hashes.appHashAfter(v), chain.appHashOf(v + 1), 'the cursor is what proven reads verify against')
  for (let block = 0; block < APP_HASH_WINDOW + 2; block++) {
    clock.advance()
    await tell(0)
  }
  t.equal(cursor.height, clock.height - 2)
  t.same(cursor.appHashAfter(cursor.height as number), chain.appHashOf(clock.height - 1), 'the newest kept')
  t.equal(cursor.appHashAfter(v), undefined, 'heights past the window dropped')
  t.ok(cursor.appHashAfter((cursor.height as number) - APP_HASH_WINDOW + 2) !== undefined, 'the window kept')
})
