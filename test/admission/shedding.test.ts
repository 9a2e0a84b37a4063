import Fastify from 'fastify'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { Shedding } from '../../src/admission/shedding.js'

function sheddingWithLog (intervalMs = 40) {
  const lines: Array<Record<string, unknown>> = []
  const shedding = new Shedding({ info: (fields, msg) => { lines.push({ ...fields, msg }) } }, undefined, intervalMs)
  return { shedding, lines }
}

t.test('a refusal is a 503 with Retry-After and a ready-made JSON body, counted by reason', async (t) => {
  const { shedding } = sheddingWithLog()
  const app = Fastify()
  app.get('/shed', async (_request, reply) => reply.send(shedding.refuse(reply, 'eventLoopDelay')))
  app.get('/busy', async (_request, reply) => reply.send(shedding.refuse(reply, 'chainQueue', 'try later', 3)))
  app.get('/fine', async (_request, reply) => {
    // A 503 of its own making is not a refusal.
    reply.code(503)
    return { message: 'no' }
  })
  const refused: boolean[] = []
  app.addHook('onResponse', async (_request, reply) => { refused.push(shedding.refused(reply)) })
  t.teardown(() => app.close())

  const shed = await app.inject('/shed')
  t.equal(shed.statusCode, 503)
  t.equal(shed.headers['retry-after'], '1')
  t.equal(shed.headers['content-type'], 'application/json; charset=utf-8')
  t.same(shed.json(), { message: 'Service Unavailable' })
  await app.inject('/shed')
  const busy = await app.inject('/busy')
  t.equal(busy.headers['retry-after'], '3')
  t.same(busy.json(), { message: 'try later' })
  t.equal((await app.inject('/fine')).statusCode, 503)
  t.same(shedding.total, { eventLoopDelay: 2, chainQueue: 1 })
  t.same(refused, [true, true, true, false])
})

t.test('at most one summary line per interval while shedding, none while not', async (t) => {
  const { shedding, lines } = sheddingWithLog(40)
  shedding.describeWith(() => ({ dropProbability: 0.5 }))
  const reply = () => ({ code () { return this }, header () { return this } }) as never
  for (let i = 0; i < 5; i++) shedding.refuse(reply(), 'eventLoopDelay')
  shedding.refuse(reply(), 'chainQueue')
  t.equal(lines.length, 0, 'nothing written per request')
  await sleep(80)
  t.equal(lines.length, 1)
  t.same(lines[0], {
    msg: 'shedding',
    count: 6,
    reason: 'eventLoopDelay',
    byReason: { eventLoopDelay: 5, chainQueue: 1 },
    total: { eventLoopDelay: 5, chainQueue: 1 },
    dropProbability: 0.5
  })
  await sleep(80)
  t.equal(lines.length, 1, 'a quiet period writes nothing')
  shedding.refuse(reply(), 'chainQueue')
  shedding.flush()
  t.equal(lines.length, 2, 'flush writes what is pending at once (at close)')
  t.same(lines[1], { msg: 'shedding', count: 1, reason: 'chainQueue', total: { eventLoopDelay: 5, chainQueue: 2 }, dropProbability: 0.5 })
  shedding.flush()
  t.equal(lines.length, 2, 'and nothing twice')
  t.same(shedding.state, { dropProbability: 0.5 })
})

t.test('without a policy the state is empty', async (t) => {
  const { shedding } = sheddingWithLog()
  t.same(shedding.state, {})
})
