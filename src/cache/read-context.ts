import type { FastifyInstance, FastifyRequest } from 'fastify'
import { NO_CLIENT } from '../fair-queue.js'
import type { ReadContext } from '../chain/types.js'

// Whose a request's chain reads are: its trace (src/tracing/) and its client, which the queues
// the reads wait in serve in fair order (fair-queue.ts). Fair admission (src/http/) names the
// client; the readers made here for the request carry it down to the queue. Here, below
// src/http/, so the cache that makes the readers may read it.

declare module 'fastify' {
  interface FastifyRequest {
    /** The client whose turn the request's chain reads and verifications wait for: set once fair admission lets the request in; NO_CLIENT before. */
    readClient: string
  }
}

/** Declares `readClient` on `app`'s requests (one shape for every request), NO_CLIENT until fair admission names the client. */
export function decorateReadClient (app: FastifyInstance): void {
  app.decorateRequest('readClient', NO_CLIENT)
}

/** The context `request`'s chain readers carry: its trace (none with tracing off or on an untraced route) and its client. */
export function readContextOf (request: FastifyRequest): ReadContext {
  return { trace: request.otelTrace ?? undefined, client: request.readClient }
}
