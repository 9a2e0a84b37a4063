import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import type { ServerResponse } from 'node:http'
import type { Socket } from 'node:net'

/**
 * How many requests of one connection are handled at a time. HTTP/1.1 answers a
 * connection's requests in order, so handling more of them ahead only builds answers that
 * wait in memory; the router sends one at a time, so it never waits here.
 */
export const MAX_REQUESTS_IN_PROGRESS_PER_CONNECTION = 4

/**
 * How many requests one connection may have unanswered, waiting ones included. More means a
 * client that sends without reading (a real one, even pipelining, waits for answers long
 * before that): its connection is closed, and what it still sends is never read.
 */
export const MAX_UNANSWERED_PER_CONNECTION = 64

interface Connection {
  readonly socket: Socket
  /** Its requests not answered yet, in arrival order: the order their answers go out in. */
  readonly replies: FastifyReply[]
  /** The onRequest hooks of the requests beyond the bound, each waiting for an earlier answer. */
  readonly waiting: HookHandlerDoneFunction[]
}

/**
 * Bounds what a client that pipelines requests and never reads the answers can cost. Node
 * parses every request of a chunk it reads (15 KB holds 400 × GET /openapi.json) and
 * only then stops reading, once answers are queued; every one of them would be handled and
 * its answer held in memory (77 KB each). Here only the first few of a connection are
 * handled; the others wait, parsed but not run, until an earlier one has been answered, so
 * queued answers stay few, Node's own back-pressure stops the reading, and a connection
 * that never reads costs a bounded amount.
 */
export class Pipelining {
  readonly #connections = new WeakMap<Socket, Connection>()
  readonly #max: number
  readonly #maxUnanswered: number

  constructor (max = MAX_REQUESTS_IN_PROGRESS_PER_CONNECTION, maxUnanswered = MAX_UNANSWERED_PER_CONNECTION) {
    this.#max = max
    this.#maxUnanswered = maxUnanswered
  }

  /**
   * The response `res` has closed: once its answer has gone out, or when its connection closed
   * under it (request-lifecycle.ts's one 'close' listener calls this for every response). The
   * next waiting request of its connection, if any, runs. A response that never took its turn
   * (refused before it: a missing Host) is none of the connection's.
   */
  answered (res: ServerResponse): void {
    const connection = this.#connections.get(res.req.socket)
    if (connection === undefined) return
    const { replies, waiting } = connection
    const index = replies.findIndex((reply) => reply.raw === res)
    if (index === -1) return
    replies.splice(index, 1)
    // A closed connection's waiting requests are never run: nobody would read their answer.
    if (connection.socket.destroyed) return
    while (waiting.length > 0 && replies.length - waiting.length < this.#max) (waiting.shift() as HookHandlerDoneFunction)()
  }

  /** The request's turn (request-lifecycle.ts's onRequest): runs it now (`done`), or once the connection's earlier ones are answered. */
  readonly admit = (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void => {
    const socket = request.raw.socket
    // The rest of a chunk Node was parsing when the connection was closed: never run.
    if (socket.destroyed) return abandon(reply)
    let connection = this.#connections.get(socket)
    if (connection === undefined) {
      const opened: Connection = { socket, replies: [], waiting: [] }
      // Node closes only the answer being written when a connection closes; the answers
      // queued behind it never get their 'close', and the requests in flight gauge would
      // count them for ever. They are closed here.
      socket.once('close', () => { for (const queued of [...opened.replies]) abandon(queued) })
      this.#connections.set(socket, opened)
      connection = opened
    }
    if (connection.replies.length === this.#maxUnanswered) {
      request.log.info({ unanswered: connection.replies.length }, 'connection closed: too many pipelined requests unanswered')
      socket.destroy()
      return abandon(reply)
    }
    // Out of the list again at its response's 'close' (answered), whichever way it closes.
    connection.replies.push(reply)
    if (connection.replies.length <= this.#max) done()
    else connection.waiting.push(done)
  }

  /** The connection's requests not answered yet, oldest first. */
  unanswered (socket: Socket): readonly FastifyReply[] {
    return this.#connections.get(socket)?.replies ?? []
  }
}

/**
 * A request that will never be answered: its response's 'close', which every listener
 * takes once (Node's may follow for the answer it was writing), ends it for the metrics.
 */
function abandon (reply: FastifyReply): void {
  reply.raw.emit('close')
}
