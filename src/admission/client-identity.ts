import type { FastifyInstance, FastifyRequest } from 'fastify'
import { isIPv4, isIPv6 } from 'node:net'

// Who a request comes from, for fair share, rate limits and the access line. The address is
// Fastify's request.ip: the socket's peer, or, when that peer is one of
// EDGE_API_TRUSTED_PROXIES (Fastify's trustProxy, @fastify/proxy-addr), the first address of
// X-Forwarded-For from the right that is not a trusted proxy. A header from an untrusted peer
// is never read, so it cannot pose as another client. A hop that is not an address (any text a
// client put in the header: proxy-addr trusts no such hop, so it would be the client) is no
// client: the hop that passed it on, the last trusted one, is. A client is so always an address
// of bounded length: one junk hop per request would otherwise be a client each (six junk hops,
// six clients, each with its own limit), of any length, into the access line.
//
// One IPv6 host usually holds a whole /64 (SLAAC, privacy addresses), so an IPv6 client is its
// /64: otherwise one host could be 2^64 clients. An IPv4-mapped IPv6 address is the IPv4 one.

declare module 'fastify' {
  interface FastifyRequest {
    /** Who the request comes from (clientOf): computed by the first to ask, then kept (null until then). */
    client: string | null
  }
}

/** Declares `client` on `app`'s requests (one shape for every request). */
export function keepClients (app: FastifyInstance): void {
  app.decorateRequest('client', null)
}

/** What clientOf answers when the socket is already gone (Node then reports no address). */
export const UNKNOWN_CLIENT = 'unknown'

/**
 * The client `request` comes from: an IPv4 address, or an IPv6 /64 as `2001:db8:0:1::/64`.
 * Computed once per request (admission's hook asks first) and kept as request.client: behind
 * a trusted proxy each reading of request.ip parses X-Forwarded-For again.
 */
export function clientOf (request: FastifyRequest): string {
  request.client ??= identify(request)
  return request.client
}

function identify (request: FastifyRequest): string {
  const ip = request.ip as string | undefined
  if (ip === undefined) return UNKNOWN_CLIENT
  const client = clientAddress(ip)
  if (client !== undefined) return client
  // Not an address: only ever an X-Forwarded-For hop, behind a trusted proxy. request.ips is
  // the socket's peer, each trusted hop, then that one: the hop before it is trusted, so an address.
  const hops = request.ips as string[]
  return clientAddress(hops[hops.length - 2] as string) as string
}

/** The client an address stands for (see clientOf); undefined for what is not an IP address. */
export function clientAddress (ip: string): string | undefined {
  if (!ip.includes(':')) return isIPv4(ip) ? ip : undefined
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip)
  if (mapped !== null) return clientAddress(mapped[1] as string)
  const address = ip.split('%', 1)[0] as string
  if (!isIPv6(address)) return undefined
  const [a, b, c, d] = (firstFourGroups(address) ?? groupsAroundGap(address)) as [number, number, number, number]
  return `${a.toString(16)}:${b.toString(16)}:${c.toString(16)}:${d.toString(16)}::/64`
}

/**
 * The first four groups of a valid IPv6 address when they are written out before any gap
 * (`::`): most addresses, read without splitting the string. Undefined when a gap comes first.
 * (Splitting and spreading made an IPv6 client 2.6 µs of every request: issue 53.)
 */
function firstFourGroups (address: string): number[] | undefined {
  const groups: number[] = []
  let start = 0
  for (let i = 0; groups.length < 4; i++) {
    if (i < address.length && address.charCodeAt(i) !== COLON) continue
    // An empty group is a gap: its zeros' count depends on what follows it.
    if (i === start) return undefined
    groups.push(parseInt(address.slice(start, i), 16))
    start = i + 1
  }
  return groups
}

const COLON = 58

/** The eight 16-bit groups of a valid IPv6 address with a gap (`::`), its zeros filled in. */
function groupsAroundGap (address: string): number[] {
  const gap = address.indexOf('::')
  const groups = hextets(address.slice(0, gap), [])
  const right = hextets(address.slice(gap + 2), [])
  for (let missing = 8 - groups.length - right.length; missing > 0; missing--) groups.push(0)
  for (const group of right) groups.push(group)
  return groups
}

/** Appends to `into` the groups of `part` (colon-separated; a trailing dotted IPv4 part, ::1.2.3.4, is two). */
function hextets (part: string, into: number[]): number[] {
  if (part === '') return into
  for (const piece of part.split(':')) {
    if (!piece.includes('.')) {
      into.push(parseInt(piece, 16))
      continue
    }
    const [a, b, c, d] = piece.split('.').map(Number) as [number, number, number, number]
    into.push(a * 256 + b, c * 256 + d)
  }
  return into
}
