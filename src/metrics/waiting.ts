import type { Counter, Registry } from 'prom-client'
import type { Histogram } from './histogram.js'
import { counterOf, durationHistogram, gaugeReading } from './instruments.js'

// The metrics of requests that wait for the chain (docs/waiting.md): held long-polls, open
// event streams, the events they were sent and how streams resumed, and how long each was held
// or open: their own histograms, never http_request_duration_seconds, whose slow-p99 alert
// would otherwise fire on every long-poll held for its wait (requests.ts: untimed). Part of a
// service's Metrics (registry.ts), in its registry.

export class WaitingMetrics {
  #held = 0
  #streamsOpen = 0
  readonly #eventsSent: Counter<'event'>
  readonly #streamResumes: Counter<'result'>
  readonly #heldDuration: Histogram<'outcome'>
  readonly #streamDuration: Histogram<never>

  constructor (registry: Registry) {
    gaugeReading(registry, 'edge_api_held_requests', 'Long-polls held until a new block or the end of their wait', () => this.#held)
    gaugeReading(registry, 'edge_api_event_streams_open', 'GET /v1/events streams open', () => this.#streamsOpen)
    this.#eventsSent = counterOf(registry, 'edge_api_events_sent_total', 'Events written to /v1/events streams, by event: head, stage, epoch',
      ['event'], ['head', 'stage', 'epoch'].map((event) => ({ event })))
    this.#streamResumes = counterOf(registry, 'edge_api_event_stream_resumes_total', 'Streams opened from a Last-Event-ID, by result: replayed (from the chain), reset (beyond the replay window)',
      ['result'], ['replayed', 'reset'].map((result) => ({ result })))
    this.#heldDuration = durationHistogram(registry, 'edge_api_held_request_duration_seconds',
      'How long each long-poll was held, by outcome: head (a new block), timeout (its wait), drain, gone (its client left)', ['outcome'])
    this.#streamDuration = durationHistogram(registry, 'edge_api_event_stream_duration_seconds', 'How long each GET /v1/events stream was open', [])
  }

  /** A held long-poll released after `seconds`, and why. */
  heldReleased (outcome: string, seconds: number): void {
    this.#heldDuration.seriesByKey(outcome, { outcome }).observe(seconds)
  }

  /** A stream closed after `seconds` open (however it ended). */
  streamClosed (seconds: number): void {
    this.#streamDuration.seriesByKey('', {}).observe(seconds)
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
