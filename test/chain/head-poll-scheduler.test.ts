import t from 'tap'
import { HeadPollScheduler } from '../../src/chain/head-poll-scheduler.js'
import type { PollOutcome } from '../../src/chain/heights-state.js'
import { ManualClock } from '../fixtures/manual-clock.js'

// When the head poll runs (src/chain/head-poll-scheduler.ts), on a manual clock: one round at a
// time, a quick silent round asked again, background rounds spaced.

function scheduler (outcomes: PollOutcome[], options: { tookMs?: number } = {}): { scheduler: HeadPollScheduler, polls: () => number, rounds: PollOutcome[], clock: ManualClock, release: () => void } {
  const clock = new ManualClock()
  const rounds: PollOutcome[] = []
  let polls = 0
  let release = (): void => {}
  const made = new HeadPollScheduler({
    poll: async () => {
      polls++
      await new Promise<void>((resolve) => { release = resolve })
      await clock.advance(options.tookMs ?? 0)
      return outcomes.shift() ?? 'told'
    },
    onRound: (outcome) => rounds.push(outcome),
    intervalMs: 500,
    retryWithinMs: 250,
    clock
  })
  return { scheduler: made, polls: () => polls, rounds, clock, release: () => { release() } }
}

async function settle (): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve))
}

t.test('one round at a time: callers meanwhile share it', async (t) => {
  const s = scheduler(['told'])
  const a = s.scheduler.round(undefined)
  const b = s.scheduler.round(undefined)
  await settle()
  s.release()
  t.same(await Promise.all([a, b]), ['told', 'told'])
  t.equal(s.polls(), 1)
  t.same(s.rounds, ['told'])
})

t.test('a silent round that ended quickly is asked again once; a slow one is not', async (t) => {
  const quick = scheduler(['silent', 'told'])
  const round = quick.scheduler.round(undefined)
  await settle()
  quick.release()
  await settle()
  quick.release()
  t.equal(await round, 'told')
  t.equal(quick.polls(), 2, 'the second poll was the round\'s outcome')
  const slow = scheduler(['silent', 'told'], { tookMs: 250 })
  const hung = slow.scheduler.round(undefined)
  await settle()
  slow.release()
  t.equal(await hung, 'silent')
  t.equal(slow.polls(), 1, 'a round that took its whole half budget is not repeated')
})

t.test('next(): a round that starts after the one in flight; two callers at once share that one', async (t) => {
  const s = scheduler(['told', 'told'])
  const first = s.scheduler.next(undefined)
  const second = s.scheduler.next(undefined)
  const third = s.scheduler.next(undefined)
  await settle()
  s.release()
  await first
  await settle()
  s.release()
  await Promise.all([second, third])
  t.equal(s.polls(), 2, 'the first started a round, the other two one after it')
})

t.test('background rounds: none while one is in flight, none within intervalMs of the last start', async (t) => {
  const s = scheduler([])
  s.scheduler.background()
  s.scheduler.background()
  await settle()
  t.equal(s.polls(), 1)
  s.release()
  await settle()
  s.scheduler.background()
  t.equal(s.polls(), 1, 'within intervalMs of the last start')
  await s.clock.advance(500)
  s.scheduler.background()
  await settle()
  t.equal(s.polls(), 2, 'after it')
  s.release()
})
