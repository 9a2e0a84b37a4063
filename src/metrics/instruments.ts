import { Counter, Gauge, type Metric, type Registry } from 'prom-client'
import { Histogram } from './histogram.js'

// How each family of metrics (http.ts, chain.ts, cache.ts, shared-tier.ts, waiting.ts) puts its
// metrics in a service's registry (registry.ts): gauges read when Prometheus scrapes, so they
// cost nothing per request; counters with every label value at 0 from the start, so an alert
// on a rate sees the first one; our own histogram for the per-request path.

/** A gauge read at scrape time (prom-client calls collect() with the gauge as `this`). */
export function gaugeReading (registry: Registry, name: string, help: string, read: () => number): void {
  registry.registerMetric(new Gauge({ name, help, registers: [], collect () { this.set(read()) } }))
}

/** A gauge of one value per chain node, labelled by its 1-based position in CHAIN_REST_URL, read at scrape time. */
export function perNodeGauge (registry: Registry, name: string, help: string, read: () => readonly number[]): void {
  registry.registerMetric(new Gauge({
    name,
    help,
    labelNames: ['node'],
    registers: [],
    collect () {
      read().forEach((value, i) => this.set({ node: String(i + 1) }, value))
    }
  }))
}

/** A counter; each label set of `zeros` is exported at 0 from the start. */
export function counterOf<Label extends string> (registry: Registry, name: string, help: string, labelNames: readonly Label[] = [], zeros: ReadonlyArray<Record<Label, string>> = []): Counter<Label> {
  const counter = new Counter<Label>({ name, help, labelNames, registers: [registry] })
  for (const labels of zeros) counter.inc(labels, 0)
  return counter
}

/**
 * Seconds, from a cached answer to the longest a request may take: the chain timeout (30 s)
 * and the shutdown budget (2 m) end the last buckets.
 */
export const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120]

/**
 * A histogram of durations in DURATION_BUCKETS, our own (histogram.ts): prom-client's types
 * name only its own classes, and its Registry reads name, help, get() and getForPromString().
 */
export function durationHistogram<Label extends string> (registry: Registry, name: string, help: string, labelNames: readonly Label[]): Histogram<Label> {
  const metric = new Histogram({ name, help, labelNames, buckets: DURATION_BUCKETS })
  registry.registerMetric(metric as unknown as Metric)
  return metric
}
