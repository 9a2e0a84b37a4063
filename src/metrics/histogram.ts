type LabelValues<Label extends string> = Record<Label, string | number>
type Labels = Record<string, string | number>

/** One label set's counts. */
export class HistogramSeries {
  /** Observations per bucket, not cumulative; beyond the last bound they are only in `count`. */
  readonly #perBucket: number[]
  readonly #bounds: readonly number[]
  sum = 0
  count = 0

  constructor (bounds: readonly number[]) {
    this.#bounds = bounds
    this.#perBucket = bounds.map(() => 0)
  }

  observe (value: number): void {
    if (!Number.isFinite(value)) throw new TypeError(`Value is not a valid number: ${value}`)
    const bounds = this.#bounds
    let i = 0
    while (i < bounds.length && value > (bounds[i] as number)) i++
    if (i < bounds.length) (this.#perBucket[i] as number)++
    this.sum += value
    this.count += 1
  }

  /** Cumulative counts, one per bound (the `le` buckets before +Inf). */
  cumulative (): number[] {
    let total = 0
    return this.#perBucket.map((n) => (total += n))
  }
}

/** One line's value, in prom-client's shape: `labels` its own (le), `sharedLabels` the series'. */
interface Value {
  readonly labels: Labels
  readonly sharedLabels?: Labels
  readonly value: number
  readonly metricName: string
  readonly exemplar: null | undefined
}

interface Exported {
  readonly name: string
  readonly help: string
  readonly type: 'histogram'
  readonly values: Value[]
  readonly aggregator: 'sum'
}

/**
 * A histogram Prometheus reads exactly as it reads prom-client's (the same names, buckets,
 * lines and order: test/metrics/histogram.test.ts compares the two), for the per-request
 * path. prom-client's `observe` converts, validates and hashes its labels on every call,
 * even through a `labels()` child: about 2.5% of a /v1/status answer's CPU. Here a label set
 * is looked up once (`series`) and each observation is a bucket search and two additions.
 * It is registered in a prom-client Registry like any metric (`registerMetric`).
 */
export class Histogram<Label extends string> {
  readonly type = 'histogram'
  readonly aggregator = 'sum'
  readonly name: string
  readonly help: string
  readonly #bounds: readonly number[]
  readonly #series = new Map<string, { labels: LabelValues<Label>, series: HistogramSeries }>()
  readonly #labelNames: readonly Label[]
  readonly #byKey = new Map<string, HistogramSeries>()
  readonly #byValues = new Map<string | number, unknown>()

  constructor (options: { name: string, help: string, labelNames: readonly Label[], buckets: readonly number[] }) {
    this.name = options.name
    this.help = options.help
    this.#labelNames = options.labelNames
    this.#bounds = [...options.buckets]
  }

  /** The series of one label set, created at its first use (prom-client shows none before). */
  series (labels: LabelValues<Label>): HistogramSeries {
    const key = this.#labelNames.map((name) => String(labels[name])).join('\u0000')
    let entry = this.#series.get(key)
    if (entry === undefined) {
      entry = { labels: { ...labels }, series: new HistogramSeries(this.#bounds) }
      this.#series.set(key, entry)
    }
    return entry.series
  }

  /**
   * The series of one label set found by `key`, a string the caller makes of them: on the
   * per-request path a lookup, not a join of the label values.
   */
  seriesByKey (key: string, labels: LabelValues<Label>): HistogramSeries {
    let series = this.#byKey.get(key)
    if (series === undefined) {
      series = this.series(labels)
      this.#byKey.set(key, series)
    }
    return series
  }

  /**
   * The series of one label set found by its values, in `labelNames`' order, through one map
   * per label: on the per-request path a few lookups of values the caller already holds (the
   * route pattern, the method, the status), no key string and no label object built once the
   * series exists.
   */
  seriesOf (...values: Array<string | number>): HistogramSeries {
    let level = this.#byValues
    const last = values.length - 1
    for (let i = 0; i < last; i++) {
      const value = values[i] as string | number
      let next = level.get(value) as Map<string | number, unknown> | undefined
      if (next === undefined) {
        next = new Map()
        level.set(value, next)
      }
      level = next
    }
    const leaf = values[last] as string | number
    let series = level.get(leaf) as HistogramSeries | undefined
    if (series === undefined) {
      series = this.series(Object.fromEntries(this.#labelNames.map((name, i) => [name, values[i]])) as LabelValues<Label>)
      level.set(leaf, series)
    }
    return series
  }

  /** What Registry#metrics() formats (prom-client's own shape for a histogram). */
  async getForPromString (): Promise<Exported> {
    const bucket = `${this.name}_bucket`
    const values: Value[] = []
    for (const { labels, series } of this.#series.values()) {
      const cumulative = series.cumulative()
      this.#bounds.forEach((le, i) => {
        values.push({ labels: { le }, sharedLabels: labels, value: cumulative[i] as number, metricName: bucket, exemplar: null })
      })
      values.push(
        { labels: { le: '+Inf' }, sharedLabels: labels, value: series.count, metricName: bucket, exemplar: null },
        { labels: {}, sharedLabels: labels, value: series.sum, metricName: `${this.name}_sum`, exemplar: undefined },
        { labels: {}, sharedLabels: labels, value: series.count, metricName: `${this.name}_count`, exemplar: undefined }
      )
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator }
  }

  /** The JSON form (Registry#getMetricsAsJSON): each value's labels with the series' own. */
  async get (): Promise<Exported> {
    const data = await this.getForPromString()
    return {
      ...data,
      values: data.values.map(({ labels, sharedLabels, ...value }) => ({ ...value, labels: { ...labels, ...sharedLabels } }))
    }
  }

  /** Forgets every series (Registry#resetMetrics). */
  reset (): void {
    this.#series.clear()
    this.#byKey.clear()
    this.#byValues.clear()
  }
}
