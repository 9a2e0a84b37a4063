import Fastify from 'fastify'
import t from 'tap'
import { clientAddress, clientOf, UNKNOWN_CLIENT } from '../../src/admission/client-identity.js'
import { request } from 'undici'
import { loadConfig } from '../../src/config.js'
import { createLogger } from '../../src/logger.js'
import { startService } from '../../src/service.js'
import { CACHE_OFF } from '../../harness/cache-off.js'
import { startChainSimulator } from '../../harness/chain-simulator/simulator.js'
import { LogLines } from '../../harness/log-lines.js'
import { until } from '../../harness/wait.js'
import { buildTestApp } from '../fixtures/app.js'

t.test('an IPv4 client is its address; an IPv4-mapped IPv6 address is the IPv4 one', async (t) => {
  t.equal(clientAddress('203.0.113.7'), '203.0.113.7')
  t.equal(clientAddress('::ffff:203.0.113.7'), '203.0.113.7')
  t.equal(clientAddress('::FFFF:127.0.0.2'), '127.0.0.2')
})

t.test('an IPv6 client is its /64: the addresses of one host\'s network are one client', async (t) => {
  t.equal(clientAddress('2001:db8:1:2:aaaa:bbbb:cccc:dddd'), '2001:db8:1:2::/64')
  t.equal(clientAddress('2001:db8:1:2::1'), '2001:db8:1:2::/64')
  t.equal(clientAddress('2001:0db8:0001:0002:0:0:0:ffff'), '2001:db8:1:2::/64', 'leading zeros do not make another client')
  t.not(clientAddress('2001:db8:1:3::1'), clientAddress('2001:db8:1:2::1'), 'the next /64 is another client')
  t.equal(clientAddress('::1'), '0:0:0:0::/64')
  t.equal(clientAddress('fe80::1%eth0'), 'fe80:0:0:0::/64', 'a zone is not part of the client')
  t.equal(clientAddress('64:ff9b::192.0.2.33'), '64:ff9b:0:0::/64', 'a trailing dotted part is two groups')
  t.equal(clientAddress('1:2:3:4:5:6:192.0.2.33'), '1:2:3:4::/64', 'and so it is with no gap')
  t.equal(clientAddress('::'), '0:0:0:0::/64')
  t.equal(clientAddress('2001:db8::'), '2001:db8:0:0::/64', 'a gap at the end')
  t.equal(clientAddress('::2:3:4:5:6:7:8'), '0:2:3:4::/64', 'a gap of one group at the start')
  t.equal(clientAddress('not:an:address'), undefined, 'what is not an address is no client')
  t.equal(clientAddress('x'.repeat(2000)), undefined)
  t.equal(clientAddress('::ffff:999.0.0.1'), undefined, 'nor is a mapped IPv4 that is not one')
  t.equal(clientAddress('203.0.113.7:443'), undefined, 'nor an address with a port')
})

t.test('clientOf reads the request\'s address, and says unknown once the socket is gone', async (t) => {
  const app = Fastify()
  app.get('/', async (request) => clientOf(request))
  app.get('/gone', async (request) => {
    Object.defineProperty(request, 'ip', { value: undefined })
    return clientOf(request)
  })
  t.teardown(() => app.close())
  t.equal((await app.inject({ url: '/', remoteAddress: '2001:db8::5' })).body, '2001:db8:0:0::/64')
  t.equal((await app.inject({ url: '/gone' })).body, UNKNOWN_CLIENT)
})

t.test('behind trusted proxies the client is the first untrusted X-Forwarded-For hop; a forged header from anyone else changes nothing', async (t) => {
  const { app, logs } = await buildTestApp(t, { env: { EDGE_API_TRUSTED_PROXIES: '10.0.0.0/8', EDGE_API_LOG_LEVEL: 'info' } })
  const ask = async (remoteAddress: string, forwarded?: string): Promise<unknown> => {
    await app.inject({ url: '/healthz', remoteAddress, headers: forwarded === undefined ? {} : { 'x-forwarded-for': forwarded } })
    await new Promise((resolve) => setImmediate(resolve))
    return logs.filter((line) => line.msg === 'request').at(-1)?.client
  }
  t.equal(await ask('10.0.0.2', '198.51.100.1, 203.0.113.9'), '203.0.113.9', 'the router\'s peer: the hop it saw')
  t.equal(await ask('10.0.0.2', '198.51.100.1, 203.0.113.9, 10.0.0.7'), '203.0.113.9', 'trusted hops skipped from the right')
  t.equal(await ask('10.0.0.2', '2001:db8:5:6::99'), '2001:db8:5:6::/64')
  t.equal(await ask('10.0.0.2'), '10.0.0.2', 'no header: the proxy itself')
  t.equal(await ask('198.51.100.50', '203.0.113.9'), '198.51.100.50', 'an untrusted peer\'s header is never read')
  t.equal(await ask('10.0.0.2', `203.0.113.9, ${'x'.repeat(2000)}`), '10.0.0.2', 'a hop that is not an address: the trusted hop that passed it on')
  t.equal(await ask('10.0.0.2', '203.0.113.9, junk, 10.0.0.7'), '10.0.0.7', 'the last trusted hop, not the peer, when several are')
  const { app: direct, logs: directLogs } = await buildTestApp(t, { env: { EDGE_API_LOG_LEVEL: 'info' } })
  await direct.inject({ url: '/healthz', remoteAddress: '10.0.0.2', headers: { 'x-forwarded-for': '203.0.113.9' } })
  await new Promise((resolve) => setImmediate(resolve))
  t.equal(directLogs.filter((line) => line.msg === 'request').at(-1)?.client, '10.0.0.2', 'with no trusted proxy (the default) nobody\'s header is read')
})

t.test('over a socket behind a trusted proxy: junk X-Forwarded-For hops are no clients of their own; the limit and the access line see the proxy', async (t) => {
  const sim = await startChainSimulator()
  const config = loadConfig({ CHAIN_REST_URL: sim.url, EDGE_API_HOST: '127.0.0.1', EDGE_API_PORT: '0', EDGE_API_METRICS_PORT: 'off', EDGE_API_LOG_LEVEL: 'info', EDGE_API_TRUSTED_PROXIES: 'loopback', EDGE_API_RATE_LIMIT: '3/1m', ...CACHE_OFF })
  const log = new LogLines()
  const service = await startService({ config, logger: createLogger(config.logLevel, log.stream), loadShedding: { maxEventLoopUtilization: 0, maxEventLoopDelay: 0 } })
  t.teardown(async () => { await service.close(); await sim.close() })
  const junk = ['unknown', 'x'.repeat(2000), '_hidden', 'a.b.c.d', '203.0.113.9:443', '::ffff:999.1.1.1']
  const statuses: number[] = []
  for (const hop of junk) {
    const res = await request(`http://127.0.0.1:${service.port}/v1/status`, { headers: { 'x-forwarded-for': `198.51.100.7, ${hop}` } })
    await res.body.dump()
    statuses.push(res.statusCode)
  }
  // Each junk hop a client of its own: 6 x 200 under a limit of 3 a minute.
  t.same(statuses, [200, 200, 200, 429, 429, 429], 'six requests of one client (the proxy) under a limit of 3 a minute')
  await until(() => log.lines.filter((line) => line.msg === 'request').length === 6, 'the six access lines')
  t.same(new Set(log.lines.filter((line) => line.msg === 'request').map((line) => line.client)), new Set(['127.0.0.1']), 'every access line names the proxy, an address')
})
