import t from 'tap'
import { HeavyHitters, TopClients, TRACKED } from '../../src/admission/top-clients.js'

t.test('the heaviest clients are counted in TRACKED entries, however many there are', async (t) => {
  const hitters = new HeavyHitters()
  for (let i = 0; i < 20_000; i++) {
    hitters.add(i % 2 === 0 ? 'heavy' : `one-off-${i}`)
    if (i % 10 === 0) hitters.add('second')
  }
  const top = hitters.top(3)
  t.equal(top[0]?.client, 'heavy')
  t.ok((top[0]?.count ?? 0) >= 10_000)
  t.equal(top[1]?.client, 'second')
  t.equal(hitters.total, 22_000)
  t.ok(hitters.top(100).length <= TRACKED)
})

t.test('one line a period names the top clients by requests and refusals; none when quiet', async (t) => {
  const lines: Array<Record<string, unknown>> = []
  const top = new TopClients({ info: (fields, msg) => lines.push({ ...fields, msg }) })
  top.flush(0)
  t.same(lines, [], 'nothing to say')
  top.requests.add('10.0.0.1')
  top.requests.add('10.0.0.1')
  top.refusals.add('10.0.0.1')
  top.requests.add('10.0.0.2')
  top.flush(2)
  t.same(lines, [{
    msg: 'top clients',
    requests: 3,
    refusals: 1,
    activeClients: 2,
    topByRequests: [{ client: '10.0.0.1', count: 2 }, { client: '10.0.0.2', count: 1 }],
    topByRefusals: [{ client: '10.0.0.1', count: 1 }]
  }])
  top.flush(0)
  t.equal(lines.length, 1, 'a new period starts empty')
})
