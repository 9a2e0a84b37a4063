import t from 'tap'
import { BURST_POLLS, FAST_MS, FOLLOW_MS, HeadFollower, SLOW_MS } from '../../src/waiting/head-follower.js'
import { ManualClock } from '../fixtures/manual-clock.js'

/** Heads whose polls the test holds open (finish) and whose rises it tells (rise). */
function heldHeads () {
  const listeners: Array<(height: number) => void> = []
  const heads = {
    polls: 0,
    finish: () => {},
    poll: async () => { heads.polls++; await new Promise<void>((resolve) => { heads.finish = resolve }) },
    onHead: (listener: (height: number) => void) => { listeners.push(listener); return () => {} },
    rise: (height: number) => { for (const listener of listeners) listener(height) }
  }
  return heads
}

/** A chain that lands a block every `blockMs` (from `startMs`, until `stopMs`), its head told by each poll, at once. */
function chainHeads (clock: ManualClock, blockMs: number, options: { startMs?: number, stopMs?: number } = {}) {
  const listeners: Array<(height: number) => void> = []
  const origin = clock.now()
  let told = 0
  const heads = {
    polls: [] as number[],
    height: () => 100 + Math.floor((Math.min(clock.now(), origin + (options.stopMs ?? Infinity)) - origin - (options.startMs ?? 0)) / blockMs),
    poll: async () => {
      heads.polls.push(clock.now())
      const height = heads.height()
      if (height > told) { told = height; for (const listener of listeners) listener(height) }
    },
    onHead: (listener: (height: number) => void) => { listeners.push(listener); return () => {} }
  }
  return heads
}

async function settled (): Promise<void> {
  await new Promise((resolve) => setImmediate(resolve))
}

t.test('one poll at a time every FOLLOW_MS while anyone follows and no pace is learnt, none otherwise', async (t) => {
  const clock = new ManualClock()
  const heads = heldHeads()
  const follower = new HeadFollower(heads, clock)
  await clock.advance(FOLLOW_MS * 4)
  t.equal(heads.polls, 0, 'nobody follows: no poll')
  const first = follower.follow()
  const second = follower.follow()
  await clock.advance(FOLLOW_MS)
  t.equal(heads.polls, 1)
  await clock.advance(FOLLOW_MS * 4)
  t.equal(heads.polls, 1, 'never a second poll while one is out')
  heads.finish()
  await settled()
  await clock.advance(FOLLOW_MS)
  t.equal(heads.polls, 2)
  first()
  first()
  second()
  heads.finish()
  await settled()
  await clock.advance(FOLLOW_MS * 4)
  t.equal(heads.polls, 2, 'the last follow ended during a poll: the loop stops after it')
  const third = follower.follow()
  await clock.advance(FOLLOW_MS)
  t.equal(heads.polls, 3)
  heads.finish()
  await settled()
  await clock.advance(1)
  third()
  t.equal(clock.pending, 0, 'ended while waiting: its timer cancelled')
  t.equal(follower.blockMs, undefined, 'no rise seen: no pace')
  heads.rise(5)
  heads.rise(6)
  t.equal(follower.blockMs, 0, 'a rise from any answer counts, followed or not')
})

t.test('a chain of 6 s blocks: slow after a block, fast when the next is due, each seen within FAST_MS, one poll per FOLLOW_MS on average at most', async (t) => {
  const clock = new ManualClock()
  const heads = chainHeads(clock, 6000, { startMs: 3007 })
  const follower = new HeadFollower(heads, clock)
  follower.follow()
  await clock.advance(60_000)
  t.equal(follower.blockMs, 6000, 'the pace learnt')
  // The last 5 blocks, learnt: from the block at 36 s (origin + 3 s + 5 x 6 s) on.
  const learnt = heads.polls.filter((at) => at >= clock.now() - 30_000)
  const lateness: number[] = []
  for (let block = 1; block <= 4; block++) {
    const landed = clock.now() - 60_000 + 3007 + (5 + block) * 6000
    const seen = learnt.find((at) => at >= landed) as number
    lateness.push(seen - landed)
    const beforeIt = learnt.filter((at) => at < landed && at > landed - 6000)
    t.ok(beforeIt.filter((at) => at < landed - 1000).every((at, i, all) => i === 0 || at - (all[i - 1] as number) >= SLOW_MS), 'slow after a block')
  }
  t.ok(lateness.every((ms) => ms <= FAST_MS), `each block seen within FAST_MS (${lateness.join(', ')} ms)`)
  t.ok(learnt.length <= 30_000 / FOLLOW_MS, `${learnt.length} polls in 30 s: at most one per FOLLOW_MS`)
  t.ok(heads.polls.length <= 60_000 / FOLLOW_MS, `${heads.polls.length} polls in 60 s, learning included`)
})

t.test('a chain that stops: fast polls only as far as the budget goes, then one per FOLLOW_MS', async (t) => {
  const clock = new ManualClock()
  const heads = chainHeads(clock, 1000, { stopMs: 10_000 })
  const follower = new HeadFollower(heads, clock)
  follower.follow()
  await clock.advance(10_000)
  const stopped = heads.polls.length
  await clock.advance(20_000)
  const since = heads.polls.length - stopped
  t.ok(since <= BURST_POLLS + 20_000 / FOLLOW_MS, `${since} polls in the 20 s with no block: at most the burst and one per FOLLOW_MS`)
  const last = heads.polls.slice(-10)
  t.ok(last.every((at, i) => i === 0 || at - (last[i - 1] as number) >= FOLLOW_MS - 1e-6), 'the burst spent: one per FOLLOW_MS')
})
