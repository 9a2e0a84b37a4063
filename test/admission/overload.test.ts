// Saturation, a burst, then sustained overload, on real sockets, with the load from another
// process: the issue this replica's admission control was built for (a saturated replica
// answering 503 to nearly everything, then 0 of 1000 reads). The event loop's readings are
// scripted (ScriptedLoop), so each phase's outcome is the policy's, whatever the speed of the
// machine running the test; what real readings look like under real overload is measured by
// the benchmark (`npm run bench`, bench 10), not asserted here.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { createRequire } from 'node:module'
import t from 'tap'
import { Pool, request } from 'undici'
import { POLICY_DEFAULTS } from '../../src/admission/pie.js'
import { PARTICIPANTS } from '../../harness/chain-simulator/data/participants.js'
import { startListeningApp } from '../fixtures/listening-app.js'
import { ScriptedLoop } from '../fixtures/scripted-loop.js'

const SATURATION_S = 2
const BURST = 1000
const TARGET_MS = 20
const autocannon = createRequire(import.meta.url).resolve('autocannon/autocannon.js')

// What the loop reports: saturated and keeping up; far behind (a burst, or overload); idle.
const KEEPING_UP = { delayMs: 5, utilization: 1 }
const BEHIND = { delayMs: 4 * TARGET_MS, utilization: 1 }
const IDLE = { delayMs: 0, utilization: 0.2 }

t.setTimeout(120_000)

t.test('saturated, it sheds nothing; a burst shorter than the allowance is served whole; sustained overload sheds a share, each 503 counted, and fades; /readyz is 200 throughout', async (t) => {
  const loop = new ScriptedLoop()
  const { app, origin } = await startListeningApp(t, { announceMs: 0, budgetMs: 5000 }, { maxEventLoopDelay: TARGET_MS, sampler: loop })
  // Past the boot's grace (1 s of readings), which the policy ignores.
  loop.feed(KEEPING_UP, 11)
  const shed = (): number => app.shedding.total.eventLoopDelay ?? 0
  const dropProbability = (): number => (app.shedding.state as { dropProbability: number }).dropProbability

  // /readyz is polled the whole time: load never takes a replica out of the pool.
  const ready: number[] = []
  const polling = { on: true }
  const poll = (async () => {
    while (polling.on) {
      const res = await request(`${origin}/readyz`)
      await res.body.dump()
      ready.push(res.statusCode)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  })()

  // Closed-loop saturation from another process (autocannon): busy, but keeping up.
  const feeding = setInterval(() => loop.feed(KEEPING_UP), loop.intervalMs)
  const load = spawn(process.execPath, [autocannon, '-c', '32', '-d', String(SATURATION_S), '-j', `${origin}/v1/status`], { stdio: ['ignore', 'pipe', 'ignore'] })
  let out = ''
  load.stdout.setEncoding('utf8').on('data', (chunk: string) => { out += chunk })
  await once(load, 'exit')
  clearInterval(feeding)
  const saturation = JSON.parse(out) as { '2xx': number, non2xx: number }
  t.ok(saturation['2xx'] > 0, `${saturation['2xx']} answered 200`)
  t.equal(saturation.non2xx, 0, 'a loop that keeps up sheds nothing, however busy')
  t.equal(shed(), 0, 'and counts nothing')

  // A thousand clients ask for the same account at once; the loop falls behind for just
  // under the burst allowance, then catches up.
  const pool = new Pool(origin, { connections: 250, pipelining: 4 })
  t.teardown(() => pool.destroy())
  const reads = async (count: number): Promise<number[]> => Promise.all(Array.from({ length: count }, async () => {
    const res = await pool.request({ path: `/v1/participants/${PARTICIPANTS[1].address}`, method: 'GET' })
    await res.body.dump()
    if (res.statusCode === 503) t.equal(res.headers['retry-after'], '1', 'a 503 says when to retry')
    return res.statusCode
  }))
  const burst = reads(BURST)
  loop.feed(BEHIND, POLICY_DEFAULTS.burstAllowanceMs / loop.intervalMs - 1)
  loop.feed(KEEPING_UP)
  const burstStatuses = await burst
  t.equal(burstStatuses.filter((s) => s === 200).length, BURST, 'every read of the burst answered 200')
  t.equal(dropProbability(), 0, 'the burst never started the controller')

  // Sustained: behind for longer than the allowance; the share grows with each sample after it.
  loop.feed(BEHIND, POLICY_DEFAULTS.burstAllowanceMs / loop.intervalMs + 3)
  t.ok(dropProbability() > 0, `drop probability ${dropProbability()}`)
  const before = shed()
  const overloaded = await reads(400)
  const refused = overloaded.filter((s) => s === 503).length
  t.ok(refused > 0 && refused < 400, `${refused} of 400 shed: a share, not all`)
  t.same(new Set(overloaded), new Set([200, 503]), 'served or shed, nothing else')
  t.equal(shed() - before, refused, 'every 503 counted')

  // The loop catches up: shedding fades out, and the next reads are all served.
  loop.feed(IDLE, 10)
  t.equal(dropProbability(), 0)
  t.same(new Set(await reads(200)), new Set([200]), 'served again')

  polling.on = false
  await poll
  t.ok(ready.length >= SATURATION_S * 5, `${ready.length} readiness checks`)
  t.same(new Set(ready), new Set([200]), '/readyz 200 throughout')
})
