import t from 'tap'
import { Drain, type DrainLog, type DrainTarget } from '../../src/lifecycle/drain.js'
import { ManualClock } from '../fixtures/manual-clock.js'

interface Deferred { promise: Promise<void>, resolve: () => void, reject: (err: Error) => void }
function deferred (): Deferred {
  const out = {} as Deferred
  out.promise = new Promise<void>((resolve, reject) => {
    out.resolve = () => resolve()
    out.reject = reject
  })
  return out
}

/** A target that records what the drain asked for; the test settles close() by hand. */
function fakeTarget () {
  const calls: string[] = []
  const listenerClosed = deferred()
  const finished = deferred()
  const target: DrainTarget = {
    beginDrain: () => { calls.push('beginDrain') },
    close: () => {
      calls.push('close')
      return { listenerClosed: listenerClosed.promise, finished: finished.promise }
    },
    forceClose: () => { calls.push('forceClose') }
  }
  return { target, calls, listenerClosed, finished }
}

function fakeLog () {
  const lines: Array<{ level: string, msg: string, fields: Record<string, unknown> }> = []
  const at = (level: string) => (fields: object, msg: string) => { lines.push({ level, msg, fields: fields as Record<string, unknown> }) }
  const log: DrainLog = { info: at('info'), warn: at('warn'), error: at('error') }
  return { log, lines, msgs: () => lines.map((l) => l.msg) }
}

const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

function setup (announceMs: number, budgetMs: number) {
  // Far from the clock's origin: every duration logged or returned is a difference of readings.
  const clock = new ManualClock(1_000_000)
  const fake = fakeTarget()
  const logs = fakeLog()
  const drain = new Drain({ announceMs, budgetMs, target: fake.target, log: logs.log, clock })
  return { clock, drain, ...fake, ...logs }
}

t.test('clean drain: serving → announcing → closing → stopped, exit 0', async (t) => {
  const { clock, drain, calls, listenerClosed, finished, msgs, lines } = setup(5000, 120_000)
  t.equal(drain.state, 'serving')
  drain.signal('SIGTERM')
  t.equal(drain.state, 'announcing')
  t.same(calls, ['beginDrain'], 'readiness latched at once; the listener stays open')
  t.same(msgs(), ['shutdown signal', 'announcing drain'])
  t.match(lines[0]?.fields, { signal: 'SIGTERM', announce: '5s', budget: '2m' })
  t.match(lines[1]?.fields, { announce: '5s', announceMs: 5000 })
  t.equal(clock.keepingAlive, 1, 'the announce window keeps the process alive')
  await clock.advance(4999)
  t.equal(drain.state, 'announcing', 'still serving during the whole window')
  await clock.advance(1)
  t.equal(drain.state, 'closing')
  t.same(calls, ['beginDrain', 'close'])
  t.equal(clock.keepingAlive, 1, 'the shutdown budget keeps the process alive')
  listenerClosed.resolve()
  await settle()
  t.match(lines[2], { msg: 'listener closed', fields: { announcedMs: 5000, budget: '2m', budgetMs: 120_000 } })
  await clock.advance(700)
  finished.resolve()
  const outcome = await drain.outcome
  t.same(outcome, { code: 0, shutdownMs: 5700 })
  t.equal(drain.state, 'stopped')
  t.match(lines[3], { msg: 'drained', fields: { drainMs: 700, shutdownMs: 5700 } })
  t.notOk(calls.includes('forceClose'), 'nothing forced')
  t.equal(clock.pending, 0, 'the budget timer is cleared')
  await clock.advance(10 * 60_000)
  t.same(msgs(), ['shutdown signal', 'announcing drain', 'listener closed', 'drained'], 'nothing happens after the outcome')
})

t.test('announce 0 closes the listener at once, without an announcement', async (t) => {
  const { drain, calls, listenerClosed, finished, msgs } = setup(0, 1000)
  drain.signal('SIGINT')
  t.equal(drain.state, 'closing')
  t.same(calls, ['beginDrain', 'close'])
  finished.resolve()
  await settle()
  t.equal(drain.state, 'closing', '"drained" waits for "listener closed"')
  listenerClosed.resolve()
  t.equal((await drain.outcome).code, 0)
  t.same(msgs(), ['shutdown signal', 'listener closed', 'drained'])
})

t.test('a second signal during the announcement forces the close at once', async (t) => {
  const { clock, drain, calls, msgs, lines } = setup(600_000, 600_000)
  drain.signal('SIGTERM')
  await clock.advance(10)
  drain.signal('SIGTERM')
  const outcome = await drain.outcome
  t.same(outcome, { code: 1, reason: 'operator sent SIGTERM during drain announcement', shutdownMs: 10 })
  t.same(calls, ['beginDrain', 'forceClose'], 'forced without waiting for the window or a graceful close')
  t.match(lines.at(-1), { level: 'warn', msg: 'closing remaining connections', fields: { reason: 'operator sent SIGTERM during drain announcement' } })
  t.equal(clock.pending, 0, 'the announce timer is cleared')
  drain.signal('SIGINT')
  t.match(lines.at(-1), { msg: 'signal ignored: already stopping', fields: { signal: 'SIGINT', state: 'stopped' } })
  t.same(msgs().filter((m) => m === 'closing remaining connections').length, 1)
})

t.test('a second signal during the shutdown forces the close', async (t) => {
  const { clock, drain, calls } = setup(0, 600_000)
  drain.signal('SIGTERM')
  await clock.advance(50)
  drain.signal('SIGINT')
  t.same(await drain.outcome, { code: 1, reason: 'operator sent SIGINT during shutdown', shutdownMs: 50 })
  t.same(calls, ['beginDrain', 'close', 'forceClose'])
  t.equal(clock.pending, 0, 'the budget timer is cleared')
})

t.test('the budget is absolute from the listener closing, even if close() never resolves', async (t) => {
  const { clock, drain, calls, listenerClosed, lines } = setup(5000, 120_000)
  drain.signal('SIGTERM')
  await clock.advance(5000)
  await clock.advance(30_000)
  listenerClosed.resolve() // a late "listener closed" does not move the deadline
  await settle()
  await clock.advance(89_999)
  t.equal(drain.state, 'closing', 'not a millisecond early')
  await clock.advance(1)
  const outcome = await drain.outcome
  t.same(outcome, { code: 1, reason: 'shutdown budget 2m expired', shutdownMs: 125_000 })
  t.same(calls, ['beginDrain', 'close', 'forceClose'])
  t.match(lines.at(-1), { msg: 'closing remaining connections', fields: { reason: 'shutdown budget 2m expired', shutdownMs: 125_000 } })
})

t.test('a completion after a forced close changes nothing', async (t) => {
  const { clock, drain, listenerClosed, finished, msgs } = setup(0, 100)
  drain.signal('SIGTERM')
  await clock.advance(100)
  listenerClosed.resolve()
  finished.resolve()
  await settle()
  t.equal((await drain.outcome).code, 1)
  t.same(msgs(), ['shutdown signal', 'closing remaining connections'], 'no "listener closed", no "drained"')
})

t.test('a close() that fails is a forced close with the reason, not a budget expiry', async (t) => {
  t.test('failing synchronously', async (t) => {
    const clock = new ManualClock(0)
    const { log, msgs } = fakeLog()
    let forced = 0
    const drain = new Drain({
      announceMs: 0,
      budgetMs: 1000,
      clock,
      log,
      target: { beginDrain: () => {}, close: () => { throw new Error('listener broke') }, forceClose: () => { forced++ } }
    })
    drain.signal('SIGTERM')
    t.same(await drain.outcome, { code: 1, reason: 'shutdown failed: listener broke', shutdownMs: 0 })
    t.equal(forced, 1)
    t.equal(clock.pending, 0)
    t.same(msgs(), ['shutdown signal', 'closing remaining connections'])
  })
  t.test('rejecting', async (t) => {
    const { drain, listenerClosed, finished, calls } = setup(0, 1000)
    drain.signal('SIGTERM')
    listenerClosed.resolve()
    finished.reject(new Error('close failed'))
    t.same(await drain.outcome, { code: 1, reason: 'shutdown failed: close failed', shutdownMs: 0 })
    t.same(calls, ['beginDrain', 'close', 'forceClose'])
  })
  t.test('rejecting after a forced close changes nothing', async (t) => {
    const { clock, drain, listenerClosed, finished, calls } = setup(0, 10)
    drain.signal('SIGTERM')
    await clock.advance(10)
    listenerClosed.resolve()
    finished.reject(new Error('destroyed'))
    await settle()
    t.same(await drain.outcome, { code: 1, reason: 'shutdown budget 10ms expired', shutdownMs: 10 })
    t.same(calls, ['beginDrain', 'close', 'forceClose'])
  })
})

t.test('a forced close that throws still exits 1 and says so', async (t) => {
  const { log, lines } = fakeLog()
  const drain = new Drain({
    announceMs: 5000,
    budgetMs: 1000,
    clock: new ManualClock(0),
    log,
    target: { beginDrain: () => {}, close: () => { throw new Error('unused') }, forceClose: () => { throw new Error('sockets gone') } }
  })
  drain.signal('SIGTERM')
  drain.signal('SIGTERM')
  t.equal((await drain.outcome).code, 1)
  t.match(lines.at(-1), { level: 'error', msg: 'forced close failed', fields: { err: { message: 'sockets gone' } } })
})

t.test('completion racing escalation has one coherent outcome (real timers, many runs)', async (t) => {
  const outcomes = { clean: 0, forced: 0 }
  for (let run = 0; run < 200; run++) {
    const { log, msgs } = fakeLog()
    let forced = 0
    const listenerClosed = Promise.resolve()
    // Completion, the budget and a second signal all land within the same millisecond.
    const finished = new Promise<void>((resolve) => setTimeout(resolve, 1))
    const drain = new Drain({
      announceMs: 0,
      budgetMs: 1,
      log,
      target: { beginDrain: () => {}, close: () => ({ listenerClosed, finished }), forceClose: () => { forced++ } }
    })
    drain.signal('SIGTERM')
    const kind = run % 3
    if (kind === 1) setTimeout(() => drain.signal('SIGTERM'), 1)
    if (kind === 2) setImmediate(() => drain.signal('SIGINT'))
    const outcome = await drain.outcome
    await new Promise((resolve) => setTimeout(resolve, 3)) // let every raced event land
    if (outcome.code === 0) {
      outcomes.clean++
      if (forced !== 0 || outcome.reason !== undefined || msgs().includes('closing remaining connections')) {
        t.fail(`run ${run}: clean exit yet forced`, { forced, outcome, msgs: msgs() })
      }
    } else {
      outcomes.forced++
      if (forced !== 1 || !/^(operator sent SIG(TERM|INT) during shutdown|shutdown budget 1ms expired)$/.test(outcome.reason ?? '') || msgs().includes('drained')) {
        t.fail(`run ${run}: forced yet incoherent`, { forced, outcome, msgs: msgs() })
      }
    }
    if (drain.state !== 'stopped') t.fail(`run ${run}: not stopped`)
  }
  t.equal(outcomes.clean + outcomes.forced, 200, `every run had one outcome (${outcomes.clean} clean, ${outcomes.forced} forced)`)
})
