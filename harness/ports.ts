import { once } from 'node:events'
import { createServer } from 'node:net'

/**
 * `count` distinct loopback ports that were free a moment ago, for processes that must be told
 * their port up front: the router knows the replicas' ports before they start, a replacement
 * reuses its predecessor's, a store that starts late is named before it listens.
 */
export async function freePorts (count: number): Promise<number[]> {
  const servers = await Promise.all(Array.from({ length: count }, async () => {
    const server = createServer()
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    return server
  }))
  const ports = servers.map((s) => (s.address() as { port: number }).port)
  await Promise.all(servers.map(async (s) => { s.close(); await once(s, 'close') }))
  return ports
}

/** One free loopback port (freePorts(1)). */
export async function freePort (): Promise<number> {
  const [port] = await freePorts(1) as [number]
  return port
}
