// Polite clients in a process of their own (so that what they measure is the replica, not the
// chain simulator sharing their event loop): COUNT clients, 127.0.0.10 onwards, each on its own
// keep-alive connections, reading HZ times a second (alternately the latest epoch and one
// account). After a second's warm-up they measure ALONE seconds and print one JSON line
// {"phase":"alone",...}; then, once a line arrives on stdin (the heavy client has started),
// they wait a second for it to ramp up, measure BESIDE seconds, print {"phase":"beside",...}
// and exit. Each line: statuses and milliseconds of every read of the phase.
// Usage: node polite-clients.mjs <origin> <count> <hz> <aloneS> <besideS> <accountPath...>
import { once } from 'node:events'
import { Agent, request } from 'undici'

const [origin, count, hz, aloneS, besideS, ...accounts] = process.argv.slice(2)
const agents = Array.from({ length: Number(count) }, (_, i) => new Agent({ localAddress: `127.0.0.${10 + i}`, connections: 2 }))
const periodMs = 1000 / Number(hz)
const sleep = async (ms) => new Promise((resolve) => setTimeout(resolve, ms))

async function phase (seconds) {
  const statuses = []
  const ms = []
  const until = performance.now() + seconds * 1000
  await Promise.all(agents.map(async (agent, i) => {
    let n = 0
    // Staggered, so that they do not ask in lockstep.
    await sleep((i * periodMs) / agents.length)
    while (performance.now() < until) {
      const path = n++ % 2 === 0 ? '/v1/epochs/latest' : accounts[i % accounts.length]
      const started = performance.now()
      try {
        const res = await request(`${origin}${path}`, { dispatcher: agent, headersTimeout: 5000, bodyTimeout: 5000 })
        await res.body.dump()
        statuses.push(res.statusCode)
      } catch {
        statuses.push(0)
      }
      const took = performance.now() - started
      ms.push(took)
      await sleep(Math.max(0, periodMs - took))
    }
  }))
  return { statuses, ms }
}

await phase(1)
process.stdout.write(JSON.stringify({ phase: 'alone', ...await phase(Number(aloneS)) }) + '\n')
await once(process.stdin, 'data')
await sleep(1000)
process.stdout.write(JSON.stringify({ phase: 'beside', ...await phase(Number(besideS)) }) + '\n')
await Promise.all(agents.map(async (agent) => agent.destroy()))
process.stdin.destroy()
