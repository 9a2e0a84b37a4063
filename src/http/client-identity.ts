import type { FastifyRequest } from 'fastify'

// Who a request is from, for fairness, limits and logs: its address as Fastify tells it
// (request.ip: the socket's, or behind a trusted proxy the first untrusted X-Forwarded-For hop),
// IPv6 grouped by its /64, the block one subscriber is given: one host can take as many
// addresses in it as it likes.

/** The request's client: its IPv4 address, or its IPv6 address's /64 prefix (`2001:db8:0:1::/64`). */
export function clientOf (request: FastifyRequest): string {
  return clientKey(request.ip)
}

/** The client an address belongs to (clientOf's rule). */
export function clientKey (address: string): string {
  if (!address.includes(':')) return address
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
  if (mapped !== null) return mapped[1] as string
  const [head = '', tail] = address.toLowerCase().split('::')
  const front = head === '' ? [] : head.split(':')
  const back = tail === undefined || tail === '' ? [] : tail.split(':')
  const groups = [...front, ...Array<string>(Math.max(0, 8 - front.length - back.length)).fill('0'), ...back]
  return `${groups.slice(0, 4).map((group) => group.replace(/^0+(?=.)/, '')).join(':')}::/64`
}
