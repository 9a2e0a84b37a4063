import t from 'tap'
import { startChainSimulator } from '../../harness/chain-simulator/simulator.js'
import { serveMain } from '../fixtures/serve-main.js'
import { getOnOwnConnection, type Answer } from '../fixtures/own-connection-get.js'
import { openSse } from '../fixtures/sse-client.js'

// The caps of requests that wait for the chain, as an operator sets them (EDGE_API_WAITING_PER_CLIENT,
// EDGE_API_WAITING_MAX), on the replica as deployed (dist/main.js): held long-polls and event
// streams counted together; the one over a cap answered 429 + Retry-After at once, while those
// already held stay held. Distinct clients are distinct loopback source addresses.

const ROUTE = '/v1/epochs/latest'
const get = async (url: string, from: string): Promise<Answer> => await getOnOwnConnection(url, {}, from)

t.test('EDGE_API_WAITING_PER_CLIENT=2 and EDGE_API_WAITING_MAX=3: the next held request or stream is a 429, the first ones stay held', async (t) => {
  const sim = await startChainSimulator()
  t.teardown(async () => await sim.close())
  const { origin } = await serveMain(t, [sim], { EDGE_API_CACHE_SIZE: '64MiB', EDGE_API_WAITING_PER_CLIENT: '2', EDGE_API_WAITING_MAX: '3' })
  const head = sim.clock.height
  const poll = `${origin}${ROUTE}?afterHeight=${head}&wait=30`
  const settled: string[] = []
  const hold = (from: string): Promise<Answer> => get(poll, from).finally(() => settled.push(from))

  const stream = await openSse(`${origin}/v1/events`, {}, '127.0.0.1')
  t.equal(stream.status, 200, 'a stream takes client 1\'s first place')
  const held = [hold('127.0.0.1')]
  await new Promise((resolve) => setTimeout(resolve, 300))
  const overClient = await get(poll, '127.0.0.1')
  t.equal(overClient.status, 429, 'client 1\'s third: refused')
  t.equal(overClient.headers['retry-after'], '5')
  t.match(JSON.parse(overClient.body).message, /long-polls and event streams together: this client is at its limit/)
  const streamOverClient = await openSse(`${origin}/v1/events`, {}, '127.0.0.1')
  await streamOverClient.endedWithin('the refused stream')
  t.same([streamOverClient.status, streamOverClient.events.at(-1)?.retry], [200, 5000], 'a stream counts with the long-polls: refused as a stream that ends with retry: 5000')

  held.push(hold('127.0.0.2'))
  await new Promise((resolve) => setTimeout(resolve, 300))
  const overReplica = await get(poll, '127.0.0.3')
  t.equal(overReplica.status, 429, 'a third client, over the replica\'s cap of 3: refused')
  t.equal(overReplica.headers['retry-after'], '5')
  t.match(JSON.parse(overReplica.body).message, /this replica is at its limit/)

  t.same(settled, [], 'the held long-polls are still held')
  await stream.next((event) => event.id === String(head))
  sim.clock.advance()
  const answers = await Promise.all(held)
  t.same(answers.map((answer) => [answer.status, answer.headers['x-block-height']]), [[200, String(head + 1)], [200, String(head + 1)]], 'each answered at the next block')
  await stream.next((event) => event.id === String(head + 1))
  t.pass('the stream goes on with the next head')
  stream.close()
  await new Promise((resolve) => setTimeout(resolve, 200))
  const freed = get(`${origin}${ROUTE}?afterHeight=${head + 1}&wait=30`, '127.0.0.3')
  await new Promise((resolve) => setTimeout(resolve, 300))
  sim.clock.advance()
  t.equal((await freed).status, 200, 'places given back are taken again')
})
