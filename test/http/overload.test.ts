// Saturation, then a burst, on real sockets: the issue this replica's admission control was
// built for (a saturated replica answering 503 to nearly everything, then 0 of 1000 reads).
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { createRequire } from 'node:module'
import t from 'tap'
import { Pool, request } from 'undici'
import { PARTICIPANTS } from '../fixtures/chain-simulator/data/participants.js'
import { startListeningApp } from '../fixtures/listening-app.js'

const SATURATION_S = 3
const BURST = 1000
const autocannon = createRequire(import.meta.url).resolve('autocannon/autocannon.js')

t.setTimeout(120_000)

t.test('32 closed-loop connections saturate /v1, then 1000 identical chain reads at once are all answered 200; /readyz is 200 throughout', async (t) => {
  const { app, origin } = await startListeningApp(t, { announceMs: 0, budgetMs: 5000 })

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

  // The load comes from another process, as it would: autocannon, closed loop.
  const load = spawn(process.execPath, [autocannon, '-c', '32', '-d', String(SATURATION_S), '-j', `${origin}/v1/status`], { stdio: ['ignore', 'pipe', 'ignore'] })
  let out = ''
  load.stdout.setEncoding('utf8').on('data', (chunk: string) => { out += chunk })
  await once(load, 'exit')
  const saturation = JSON.parse(out) as { '2xx': number, non2xx: number }
  t.ok(saturation['2xx'] > 0, `${saturation['2xx']} answered 200`)
  // Closed loop offers exactly what the process serves: there is no excess to shed.
  t.ok(saturation.non2xx <= 0.1 * (saturation['2xx'] + saturation.non2xx), `${saturation.non2xx} shed`)

  // Right after: a thousand clients ask for the same account at once.
  const pool = new Pool(origin, { connections: 250, pipelining: 4 })
  t.teardown(() => pool.destroy())
  const path = `/v1/participants/${PARTICIPANTS[1].address}`
  const statuses = await Promise.all(Array.from({ length: BURST }, async () => {
    const res = await pool.request({ path, method: 'GET' })
    await res.body.dump()
    return res.statusCode
  }))
  polling.on = false
  await poll
  t.equal(statuses.filter((s) => s === 200).length, BURST, 'every read answered 200')
  t.ok(ready.length >= SATURATION_S * 5, `${ready.length} readiness checks`)
  t.same(new Set(ready), new Set([200]), '/readyz 200 throughout')
  t.same(app.shedding.total.eventLoopDelay ?? 0, saturation.non2xx, 'every 503 was counted')
})
