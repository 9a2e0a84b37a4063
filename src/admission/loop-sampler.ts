import { monitorEventLoopDelay, performance } from 'node:perf_hooks'
import { getHeapStatistics } from 'node:v8'
import { REAL_CLOCK } from '../clock.js'

// Admission's one sampler of the event loop (it was three 100 ms timers: under-pressure's, one
// reading it for the delay policy, fair share's): every `sampleInterval` it reads the mean
// event-loop delay, the share of the time the loop was busy and the heap, and hands them to
// whoever admits requests (admission.ts: the hard limits, the delay policy, the far-over
// clients' pace). The readings are under-pressure's, which this replaces: the delay from a
// 10 ms-resolution histogram reset every sample, less that resolution; utilisation since the
// last sample (interval mode, fastify/under-pressure#294); the V8 heap in use.

/** The event loop as one sample saw it. */
export interface LoopReading {
  /** Mean event-loop delay, ms; Infinity when no tick at all was seen (the loop blocked throughout). */
  readonly delayMs: number
  /** Share of the sample's time the event loop was busy, 0–1. */
  readonly utilization: number
  /** The V8 heap in use, bytes (the hard limit maxHeapUsedBytes). */
  readonly heapUsedBytes: number
}

/**
 * Where admission's readings and time come from: the event loop's, on a timer, in production
 * (`eventLoopSampler`); tests script them, so that what the policy decides does not depend
 * on how fast the machine running the test is.
 */
export interface LoopSampler {
  /** Monotonic ms, on the clock the readings are taken on (REAL_CLOCK's for the event loop's). */
  now (): number
  /** Hands `take` one reading per sample until the returned function is called. */
  start (take: (loop: LoopReading) => void): () => void
}

/** The delay histogram's resolution, ms: a sample shorter than it could see no tick at all. */
export const RESOLUTION_MS = 10

/** The heap in use now, bytes. */
export function heapUsedBytes (): number {
  return getHeapStatistics().used_heap_size
}

/** The mean delay of a sample, ms, from the histogram's mean (ns); NaN (no tick since the last reset: the loop blocked for about all of the sample) is Infinity. */
export function meanDelayMs (histogramMeanNs: number): number {
  return Number.isNaN(histogramMeanNs) ? Infinity : Math.max(0, histogramMeanNs / 1e6 - RESOLUTION_MS)
}

/** The event loop's own readings, one per `sampleInterval` ms (at least RESOLUTION_MS). */
export function eventLoopSampler (sampleInterval: number): LoopSampler {
  return {
    now: REAL_CLOCK.now,
    start: (take) => {
      const histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS })
      histogram.enable()
      let busy = performance.eventLoopUtilization()
      const timer = setInterval(() => {
        const delayMs = meanDelayMs(histogram.mean)
        histogram.reset()
        const now = performance.eventLoopUtilization()
        const utilization = performance.eventLoopUtilization(now, busy).utilization
        busy = now
        take({ delayMs, utilization, heapUsedBytes: heapUsedBytes() })
      }, Math.max(RESOLUTION_MS, sampleInterval))
      timer.unref()
      return () => {
        clearInterval(timer)
        histogram.disable()
      }
    }
  }
}
