import type { FastifyReply } from 'fastify'
import { EventEmitter } from 'node:events'
import t from 'tap'
import { LATEST_BLOCK_PATH } from '../../src/chain/paths.js'
import { whenGone } from '../../src/waiting/long-poll.js'
import { buildTestApp } from '../fixtures/app.js'

// A long-poll whose client leaves while the replica asks its nodes for the head (the first
// await of the long-poll step): its place is never taken, nothing is held for it.

const ROUTE = '/v1/epochs/latest'

t.test('a client that leaves while the head is asked for takes no place and is not held', async (t) => {
  const { app, sim } = await buildTestApp(t, { env: { EDGE_API_CACHE_SIZE: '64MiB', EDGE_API_WAITING_PER_CLIENT: '1', EDGE_API_HEAD_MAX_AGE: '100ms' } })
  const server = await app.listen({ port: 0, host: '127.0.0.1' })
  t.equal((await fetch(`${server}${ROUTE}`)).status, 200, 'a head known')
  // Stale by now (100 ms), and the next poll takes 400 ms: the long-poll awaits it.
  await new Promise((resolve) => setTimeout(resolve, 200))
  sim.latency(400, LATEST_BLOCK_PATH)
  const url = `${server}${ROUTE}?afterHeight=${sim.clock.height}&wait=30`
  const polls = sim.count(LATEST_BLOCK_PATH)
  const leaving = new AbortController()
  const left = fetch(url, { signal: leaving.signal }).catch(() => 'aborted')
  await new Promise((resolve) => setTimeout(resolve, 100))
  t.equal(sim.count(LATEST_BLOCK_PATH), polls + 1, 'the replica is asking its node for the head')
  leaving.abort()
  t.equal(await left, 'aborted')
  await new Promise((resolve) => setTimeout(resolve, 600))
  sim.clearFaults()
  const next = fetch(url)
  await new Promise((resolve) => setTimeout(resolve, 300))
  sim.clock.advance()
  t.equal((await next).status, 200, 'the client\'s one place is free: its next long-poll is held, not a 429 (at 1365d2e: held 30 s for nobody)')
})

t.test('whenGone: at once for a response already closed; else on its close, until stopped', async (t) => {
  const gone: string[] = []
  whenGone({ raw: { destroyed: true } } as unknown as FastifyReply, () => gone.push('closed'))()
  const raw = Object.assign(new EventEmitter(), { destroyed: false })
  const stop = whenGone({ raw } as unknown as FastifyReply, () => gone.push('later'))
  raw.emit('close')
  const stopped = whenGone({ raw } as unknown as FastifyReply, () => gone.push('stopped'))
  stopped()
  raw.emit('close')
  stop()
  t.same(gone, ['closed', 'later'])
})
