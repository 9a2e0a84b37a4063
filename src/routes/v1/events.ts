import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { parseEventId, type EventCursor } from '../../chain/chain-events.js'
import type { ChainClient } from '../../chain/client.js'
import { EpochAnchor } from '../../chain/epoch-anchor.js'
import { ChainEventLog } from '../../chain/event-log.js'
import { badRequest } from '../../errors.js'
import { END_FLUSH_MS, EventStreams, REPLAY_WINDOW, type StreamObserver } from '../../waiting/event-streams.js'
import { untimed } from '../../metrics/requests.js'
import type { WaitingMetrics } from '../../metrics/waiting.js'
import type { HeadFollower } from '../../waiting/head-follower.js'
import { waitingClient, whenGone } from '../../waiting/long-poll.js'
import { refuseStream } from '../../admission/stream-refusal.js'
import { OVER_CAP_RETRY_S, overCap, type WaitQuota } from '../../waiting/wait-quota.js'

// GET /v1/events: Server-Sent Events of the chain's heads, epoch stages and epochs, resumable
// on any replica from Last-Event-ID (docs/waiting.md). Registered beside the other /v1 routes,
// not among them: load shedding never answers it 503 (a browser's EventSource stops for good
// on one), and the answer cache has nothing to keep of a stream.

const ID_RULE = 'Last-Event-ID (or lastEventId) must be an event id of this stream: <height> or <height>.<n>'

export interface EventsOptions {
  readonly chain: ChainClient
  readonly follower: HeadFollower
  /** The caps of open streams, shared with the held long-polls (app.ts). */
  readonly quota: WaitQuota
  readonly metrics?: WaitingMetrics | undefined
}

export const events: FastifyPluginAsyncTypebox<EventsOptions> = async (app, { chain, follower, quota, metrics }) => {
  const observer = metrics === undefined ? undefined : streamObserver(metrics)
  const log = new ChainEventLog(new EpochAnchor(chain, chain.clock), REPLAY_WINDOW + 100)
  const streams = new EventStreams({ heads: chain.heads, follower, clock: chain.clock, source: log, quota, observer })
  app.addHook('preClose', async () => streams.drain())
  app.addHook('onClose', async () => streams.stop())

  app.get('/events', {
    schema: {
      // Not in the OpenAPI document (a stream, not a JSON answer): docs/waiting.md describes it.
      hide: true,
      summary: 'Server-Sent Events of new heads, epoch stages and new epochs; each id its chain coordinates, resumable from Last-Event-ID',
      querystring: Type.Object({ lastEventId: Type.Optional(Type.String({ description: 'where to resume on a first connect; Last-Event-ID wins' })) })
    }
  }, async (request, reply) => {
    const cursor = cursorAsked(request.headers['last-event-id'], request.query.lastEventId)
    // Nothing awaited before the stream is open and its client's leaving handled: a client that
    // leaves at any moment gives back its place, its follow and its timers (whenGone).
    const stream = streams.open(waitingClient(request), cursor, chain.heads.best)
    // Refused by a cap: a stream that ends with its retry:, which an EventSource comes back from (a 429 ends it for good).
    if (typeof stream === 'string') return refuseStream(reply, OVER_CAP_RETRY_S, overCap(stream).message)
    whenGone(reply, () => streams.close(stream))
    untimed(reply)
    // Asks the nodes when the head is old; a stream opened before any head is known starts at the first.
    // (ChainHeads.latest never rejects.)
    chain.heads.latest().then(() => { streams.rise(chain.heads.best) })
    // Once it has ended (the drain, its age), its connection is closed too: its headers went
    // out without Connection: close, and the router would keep it idle (and the drain wait for
    // it); its client reconnects on a new one, which the router may send elsewhere. Destroyed
    // END_FLUSH_MS later if its client does not take the close (it stopped reading).
    // (The socket is taken now: a finished response lets go of it.)
    const socket = request.raw.socket
    reply.raw.once('finish', () => {
      socket.end()
      chain.clock.after(END_FLUSH_MS, () => socket.destroy())
    })
    return reply
      .header('content-type', 'text/event-stream; charset=utf-8')
      .header('cache-control', 'no-cache')
      .header('x-accel-buffering', 'no')
      .send(stream.body)
  })
}

/** The cursor a request resumes from; undefined on a first connect; a 400 for one that is no event id. */
function cursorAsked (header: string | string[] | undefined, query: string | undefined): EventCursor | undefined {
  const id = typeof header === 'string' ? header : query
  if (id === undefined || id === '') return undefined
  const cursor = parseEventId(id)
  if (cursor === undefined) throw badRequest(ID_RULE)
  return cursor
}

function streamObserver (metrics: WaitingMetrics): StreamObserver {
  return {
    opened: (open) => metrics.streamsOpen(open),
    closed: (open, seconds) => {
      metrics.streamsOpen(open)
      metrics.streamClosed(seconds)
    },
    sent: (event) => metrics.eventSent(event.event),
    replayed: () => metrics.streamResumed('replayed'),
    reset: () => metrics.streamResumed('reset')
  }
}
