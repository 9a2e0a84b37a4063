import { once } from 'node:events'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { ListenError } from '../errors.js'

/** What the listener serves: Metrics (registry.ts). */
export interface Scrapable {
  readonly contentType: string
  scrape (): Promise<string>
}

/**
 * The metrics listener: GET /metrics, anything else 404. A plain node:http server, not a
 * second Fastify: it has one route and nothing to validate, and none of the public app's
 * machinery (router, load shedding, drain, request metrics, return503OnClosing) may touch
 * it. The drain never closes it, so it answers until the process exits; service.ts closes
 * it only when a test or the bench closes the whole service.
 */
export class MetricsListener {
  readonly #server: Server

  constructor (metrics: Scrapable) {
    this.#server = createServer((request, response) => { serve(metrics, request, response) })
  }

  /** Listens on host:port (0 = any free port, for tests); resolves with the port bound. Throws ListenError. */
  async listen (host: string, port: number): Promise<number> {
    this.#server.listen(port, host)
    try {
      await once(this.#server, 'listening')
    } catch (err) {
      throw new ListenError(host, port, err as NodeJS.ErrnoException, 'metrics listener (EDGE_API_METRICS_PORT)')
    }
    return (this.#server.address() as AddressInfo).port
  }

  /** Stops listening and ends every connection (Prometheus keeps its own alive). */
  async close (): Promise<void> {
    if (!this.#server.listening) return
    const closed = once(this.#server, 'close')
    this.#server.close()
    this.#server.closeAllConnections()
    await closed
  }
}

function serve (metrics: Scrapable, request: IncomingMessage, response: ServerResponse): void {
  const path = (request.url as string).split('?', 1)[0]
  if (request.method !== 'GET' || path !== '/metrics') {
    response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('Not Found: metrics are at GET /metrics\n')
    return
  }
  metrics.scrape().then((text) => {
    response.writeHead(200, { 'content-type': metrics.contentType, 'cache-control': 'no-store' }).end(text)
  }, (err: Error) => {
    response.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end(`metrics could not be collected: ${err.message}\n`)
  })
}
