import { setImmediate as nextTurn } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'
import type { DrainTarget } from './drain.js'

export interface HttpTargetParts {
  /** The listening app; its server is closed by Fastify's own close(). */
  readonly app: Pick<FastifyInstance, 'close' | 'server'>
  readonly readiness: { beginDrain (): void }
  readonly chain: { abortAll (): void }
}

// Fastify closes the listener a few event-loop turns after close() is called (after its
// preClose hooks); this bounds the wait for a listener that a stuck hook keeps open.
const MAX_TURNS_TO_CLOSE = 1000

/** The drain target for a real Fastify server: readiness latch, graceful close, forced close. */
export function httpDrainTarget ({ app, readiness, chain }: HttpTargetParts): DrainTarget {
  return {
    beginDrain: () => readiness.beginDrain(),
    close: () => {
      // Fastify's close(): requests on open sockets get 503 + Connection: close, idle sockets
      // are reaped as the listener closes, and it resolves once every connection has ended.
      // Sockets that finish a response later close at once thanks to the Connection: close
      // hook (app.ts), so this does not wait for keepAliveTimeout (fastify/fastify#7044).
      const finished = app.close()
      const listenerClosed = (async () => {
        for (let turn = 0; turn < MAX_TURNS_TO_CLOSE && app.server.listening; turn++) await nextTurn()
      })()
      return { listenerClosed, finished }
    },
    forceClose: () => {
      // Aborting the chain requests first makes their handlers answer 503 at once; the
      // sockets are destroyed right after, so nothing waits on a chain that hangs.
      chain.abortAll()
      app.server.closeAllConnections()
    }
  }
}
