import { once } from 'node:events'
import { createServer, type AddressInfo } from 'node:net'

/**
 * A free loopback port, for processes that must be told their port up front (dist/main.js
 * logs the port it bound, but parsing logs would tie the bench to a log format).
 */
export async function freePort (): Promise<number> {
  const server = createServer()
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo
  server.close()
  await once(server, 'close')
  return port
}
