// `flock /tmp/edge-heavy.lock npx tsx bench/redis-clients.ts`: the shared tier's client
// library chosen by measurement (BENCHMARKS.md, "Redis client"). node-redis 6 (@redis/client,
// the client of the `redis` package without its module commands) and ioredis 6 side by side against one local redis-server: GET+SET round trips of a 2 KB value
// at concurrency 1 and 32, rounds alternating which client goes first, medians; then what the
// shared tier needs of a client when the store misbehaves: a command's timeout while the
// server is frozen (SIGSTOP), a command's failure while it is down (no offline queue), and
// the time until commands succeed again after it restarts.
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { setTimeout as sleep } from 'node:timers/promises'
import { Redis } from 'ioredis'
import { createClient } from '@redis/client'
import { freePorts } from '../test/fixtures/e2e/replica.js'

const VALUE = 'x'.repeat(2048)
const ROUNDS = 6
const OPS_PER_ROUND = 4000
const TIMEOUT_MS = 5
// The round trips are measured without a deadline (a loaded machine's 5 ms stalls would fail
// them); the deadline is set for the failure part only.
let deadlineMs = Infinity

const deadlines: Array<() => void> = []

interface Client {
  readonly name: string
  get (key: string): Promise<unknown>
  set (key: string, value: string): Promise<unknown>
  close (): Promise<void>
}

async function nodeRedis (port: number): Promise<Client> {
  const client = createClient({ url: `redis://127.0.0.1:${port}`, disableOfflineQueue: true, socket: { reconnectStrategy: () => 100, connectTimeout: 1000 } })
  client.on('error', () => {})
  await client.connect()
  // Its own command timeout, set for the failure part (deadline below).
  let timed = client
  deadlines.push(() => { timed = client.withCommandOptions({ timeout: TIMEOUT_MS }) as typeof client })
  return { name: 'redis', get: (k) => timed.get(k), set: (k, v) => timed.set(k, v), close: async () => { client.destroy() } }
}

/** node-redis with the deadline src/shared/store.ts puts on every command: a race with a timer. */
async function nodeRedisRaced (port: number): Promise<Client> {
  const client = await nodeRedis(port)
  const raced = <T>(sent: Promise<T>): Promise<T> => {
    let timer: NodeJS.Timeout | undefined
    if (deadlineMs === Infinity) return sent
    return Promise.race([sent, new Promise<T>((_resolve, reject) => { timer = setTimeout(() => reject(new Error('own deadline')), deadlineMs) })]).finally(() => clearTimeout(timer))
  }
  return { name: 'redis+race', get: (k) => raced(client.get(k)), set: (k, v) => raced(client.set(k, v)), close: () => client.close() }
}

async function ioredis (port: number): Promise<Client> {
  const client = new Redis({ port, host: '127.0.0.1', enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: () => 100, connectTimeout: 1000, lazyConnect: true })
  client.on('error', () => {})
  await client.connect()
  // Set for the failure part (deadline()): ioredis applies commandTimeout to its own HELLO and
  // ready check too, and 5 ms on a loaded machine closed the connection before it was ready.
  deadlines.push(() => { client.options.commandTimeout = TIMEOUT_MS })
  return { name: 'ioredis', get: (k) => client.get(k), set: (k, v) => client.set(k, v), close: async () => { client.disconnect() } }
}

async function startRedis (port: number): Promise<ChildProcess> {
  const server = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' })
  for (let i = 0; i < 100; i++) {
    const probe = createClient({ url: `redis://127.0.0.1:${port}`, socket: { reconnectStrategy: false } })
    probe.on('error', () => {})
    try {
      await probe.connect()
      probe.destroy()
      return server
    } catch {
      await sleep(20)
    }
  }
  throw new Error('redis-server did not start')
}

/** Operations per second and per-operation p50/p99 (µs) of GET+SET pairs at `concurrency`. */
async function throughput (client: Client, concurrency: number): Promise<{ opsPerSec: number, p50: number, p99: number }> {
  const times: number[] = []
  let left = OPS_PER_ROUND
  const start = performance.now()
  await Promise.all(Array.from({ length: concurrency }, async (_, w) => {
    while (left-- > 0) {
      const t0 = performance.now()
      await client.set(`k${w}`, VALUE)
      await client.get(`k${w}`)
      times.push((performance.now() - t0) * 1000 / 2)
    }
  }))
  const seconds = (performance.now() - start) / 1000
  times.sort((a, b) => a - b)
  return { opsPerSec: OPS_PER_ROUND * 2 / seconds, p50: times[Math.floor(times.length / 2)] as number, p99: times[Math.floor(times.length * 0.99)] as number }
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number

/** How long a GET takes to fail, or succeed, at this moment (ms), and how. */
async function attempt (client: Client): Promise<{ ms: number, outcome: string }> {
  const t0 = performance.now()
  try {
    // Capped at 1 s: a client whose own timeout does not fire would wait for ever.
    let cap: NodeJS.Timeout | undefined
    await Promise.race([client.get('k0'), new Promise((_resolve, reject) => { cap = setTimeout(() => reject(new Error('no answer, no timeout within 1000 ms')), 1000) })]).finally(() => clearTimeout(cap))
    return { ms: performance.now() - t0, outcome: 'ok' }
  } catch (err) {
    return { ms: performance.now() - t0, outcome: (err as Error).message.slice(0, 60) }
  }
}

async function main (): Promise<void> {
  // A command a client rejects after the bench stopped waiting for it (a frozen server's).
  process.on('unhandledRejection', () => {})
  const [port] = await freePorts(1) as [number]
  let server = await startRedis(port)
  const makers = [nodeRedis, ioredis, nodeRedisRaced]
  const clients = await Promise.all(makers.map((make) => make(port)))
  const results: Record<string, Record<number, Array<{ opsPerSec: number, p50: number, p99: number }>>> = {}
  for (const concurrency of [1, 32]) {
    for (const client of clients) await throughput(client, concurrency) // warm-up
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? clients : [...clients].reverse()
      for (const client of order) {
        ((results[client.name] ??= {})[concurrency] ??= []).push(await throughput(client, concurrency))
      }
    }
  }
  console.log('client   conc  ops/s(median)  p50 µs  p99 µs')
  for (const client of clients) {
    for (const concurrency of [1, 32]) {
      const runs = results[client.name]?.[concurrency] ?? []
      console.log(`${client.name.padEnd(8)} ${String(concurrency).padStart(4)}  ${median(runs.map((r) => r.opsPerSec)).toFixed(0).padStart(13)}  ${median(runs.map((r) => r.p50)).toFixed(0).padStart(6)}  ${median(runs.map((r) => r.p99)).toFixed(0).padStart(6)}`)
    }
  }

  // node-redis: its own commandOptions.timeout (5 ms); ioredis: commandTimeout; redis+race: a timer race.
  deadlineMs = TIMEOUT_MS
  for (const set of deadlines) set()
  // Frozen: the socket stays open, nothing answers.
  server.kill('SIGSTOP')
  await sleep(50)
  for (const client of clients) {
    const tries = [await attempt(client), await attempt(client), await attempt(client)]
    console.log(`SIGSTOP  ${client.name}: ${tries.map((t) => `${t.ms.toFixed(1)} ms ${t.outcome}`).join(' | ')}`)
  }
  server.kill('SIGCONT')
  await sleep(100)
  for (const client of clients) console.log(`SIGCONT  ${client.name}: ${JSON.stringify(await attempt(client))}`)

  // Down: the server killed, the port refusing.
  server.kill('SIGKILL')
  await once(server, 'exit')
  await sleep(50)
  for (const client of clients) {
    const tries = [await attempt(client), await attempt(client)]
    console.log(`down     ${client.name}: ${tries.map((t) => `${t.ms.toFixed(2)} ms ${t.outcome}`).join(' | ')}`)
  }
  // Back: how long after the restart until a GET succeeds (both reconnect every 100 ms here).
  server = await startRedis(port)
  const back = performance.now()
  await Promise.all(clients.map(async (client) => {
    for (let i = 0; i < 500; i++) {
      if ((await attempt(client)).outcome === 'ok') {
        console.log(`restart  ${client.name}: first GET ok ${(performance.now() - back).toFixed(0)} ms after the server answered`)
        return
      }
      await sleep(5)
    }
    console.log(`restart  ${client.name}: no GET ok within 2.5 s`)
  }))
  await Promise.all(clients.map((c) => c.close()))
  server.kill('SIGKILL')
}

await main()
