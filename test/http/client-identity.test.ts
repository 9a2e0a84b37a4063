import Fastify from 'fastify'
import t from 'tap'
import { clientAddress, clientOf, UNKNOWN_CLIENT } from '../../src/http/client-identity.js'
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
  t.equal(clientAddress('not:an:address'), 'not:an:address', 'what is not an address is kept as it is')
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
  const { app: direct, logs: directLogs } = await buildTestApp(t, { env: { EDGE_API_LOG_LEVEL: 'info' } })
  await direct.inject({ url: '/healthz', remoteAddress: '10.0.0.2', headers: { 'x-forwarded-for': '203.0.113.9' } })
  await new Promise((resolve) => setImmediate(resolve))
  t.equal(directLogs.filter((line) => line.msg === 'request').at(-1)?.client, '10.0.0.2', 'with no trusted proxy (the default) nobody\'s header is read')
})
