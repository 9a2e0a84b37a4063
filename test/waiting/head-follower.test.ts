import t from 'tap'
import { FOLLOW_MS, HeadFollower } from '../../src/waiting/head-follower.js'
import { ManualClock } from '../fixtures/manual-clock.js'

t.test('one poll at a time every FOLLOW_MS while anyone follows, none otherwise', async (t) => {
  const clock = new ManualClock()
  let polls = 0
  let finish: () => void = () => {}
  const heads = { poll: async () => { polls++; await new Promise<void>((resolve) => { finish = resolve }) } }
  const follower = new HeadFollower(heads, clock)
  await clock.advance(FOLLOW_MS * 4)
  t.equal(polls, 0, 'nobody follows: no poll')
  const first = follower.follow()
  const second = follower.follow()
  await clock.advance(FOLLOW_MS)
  t.equal(polls, 1)
  await clock.advance(FOLLOW_MS * 4)
  t.equal(polls, 1, 'never a second poll while one is out')
  finish()
  await settled()
  await clock.advance(FOLLOW_MS)
  t.equal(polls, 2)
  first()
  first()
  second()
  finish()
  await settled()
  await clock.advance(FOLLOW_MS * 4)
  t.equal(polls, 2, 'the last follow ended during a poll: the loop stops after it')
  const third = follower.follow()
  await clock.advance(FOLLOW_MS)
  t.equal(polls, 3)
  finish()
  await settled()
  await clock.advance(1)
  third()
  t.equal(clock.pending, 0, 'ended while waiting: its timer cancelled')
})

async function settled (): Promise<void> {
  await new Promise((resolve) => setImmediate(resolve))
}
