import type { Counter, Registry } from 'prom-client'
import { counterOf, gaugeReading } from './instruments.js'

// The metrics of requests that wait for the chain (docs/waiting.md): held long-polls, open
// event streams, the events they were sent and how streams resumed. Part of a service's
// Metrics (registry.ts), in its registry.

export class WaitingMetrics {
  #held = 0
  #streamsOpen = 0
  readonly #eventsSent: Counter<'event'>
  readonly #streamResumes: Counter<'result'>

  constructor (registry: Registry) {
    gaugeReading(registry, 'edge_api_held_requests', 'Long-polls held until a new block or the end of their wait', () => this.#held)
    gaugeReading(registry, 'edge_api_event_streams_open', 'GET /v1/events streams open', () => this.#streamsOpen)
    this.#eventsSent = counterOf(registry, 'edge_api_events_sent_total', 'Events written to /v1/events streams, by event: head, stage, epoch',
      ['event'], ['head', 'stage', 'epoch'].map((event) => ({ event })))
    this.#streamResumes = counterOf(registry, 'edge_api_event_stream_resumes_total', 'Streams opened from a Last-Event-ID, by result: replayed (from the chain), reset (beyond the replay window)',
      ['result'], ['replayed', 'reset'].map((result) => ({ result })))
  }

  /** Long-polls held now. */
  heldRequests (held: number): void {
    this.#held = held
  }

  /** Event streams open now. */
  streamsOpen (open: number): void {
    this.#streamsOpen = open
  }

  /** An event written to a stream. */
  eventSent (event: string): void {
    this.#eventsSent.inc({ event })
  }

  /** A stream opened from a client's cursor: replayed from the chain, or reset beyond the window. */
  streamResumed (result: 'replayed' | 'reset'): void {
    this.#streamResumes.inc({ result })
  }
}
