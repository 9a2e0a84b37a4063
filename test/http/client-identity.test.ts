import t from 'tap'
import type { FastifyRequest } from 'fastify'
import { clientKey, clientOf } from '../../src/http/client-identity.js'

t.test('a client is its IPv4 address, or its IPv6 address\'s /64', async (t) => {
  t.equal(clientOf({ ip: '127.0.0.7' } as FastifyRequest), '127.0.0.7')
  t.equal(clientKey('::ffff:10.1.2.3'), '10.1.2.3', 'an IPv4-mapped address is its IPv4 address')
  t.equal(clientKey('2001:db8:1:2:aaaa::1'), '2001:db8:1:2::/64')
  t.equal(clientKey('2001:DB8:1:2:bbbb:cccc:dddd:eeee'), '2001:db8:1:2::/64', 'every address of a /64 is one client')
  t.equal(clientKey('2001:db8::1'), '2001:db8:0:0::/64')
  t.equal(clientKey('::1'), '0:0:0:0::/64')
  t.equal(clientKey('fe80:0001:0000:0002::'), 'fe80:1:0:2::/64')
})
