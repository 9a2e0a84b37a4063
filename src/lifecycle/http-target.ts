import type { FastifyInstance } from 'fastify'
import type { DrainTarget } from './drain.js'

export interface HttpTargetParts {
  /** The listening app; its server is closed by Fastify's own close(). */
  readonly app: Pick<FastifyInstance, 'close' | 'server'>
  readonly readiness: { beginDrain (): void }
  readonly chain: { abortAll (): void }
}

// How often the listener is looked at while Fastify closes it (see listenerClosed below).
const LISTENER_POLL_MS = 1

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
      return { listenerClosed: listenerClosed(app.server, finished), finished }
    },
    forceClose: () => {
      // Aborting the chain requests first makes their handlers answer 503 at once; the
      // sockets are destroyed right after, so nothing waits on a chain that hangs.
      chain.abortAll()
      app.server.closeAllConnections()
    }
  }
}

/**
 * Resolves once `server` no longer listens. Fastify stops the listener a few event-loop turns
 * after close() (after its preClose hooks) and announces it with no event (the server's own
 * 'close' waits for every connection), so it is watched. Close finishing means the listener is
 * gone; close failing rejects, so the drain never logs a closed listener that is not. A hook
 * that never lets the listener close is the drain's budget's business, not this wait's.
 */
function listenerClosed (server: Pick<FastifyInstance['server'], 'listening'>, finished: Promise<void>): Promise<void> {
  return new Promise((resolve, reject) => {
    let timer: NodeJS.Timeout | undefined
    const done = (): void => {
      clearTimeout(timer)
      resolve()
    }
    finished.then(done, (err: unknown) => {
      clearTimeout(timer)
      reject(err)
    })
    const check = (): void => {
      if (!server.listening) done()
      // Unref'd: waiting for the listener never keeps a process alive by itself.
      else timer = setTimeout(check, LISTENER_POLL_MS).unref()
    }
    check()
  })
}
