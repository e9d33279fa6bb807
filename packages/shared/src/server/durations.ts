/**
 * The request-duration histogram, as a metric prom-client's Registry exposes like its own
 * Histogram (same text, same JSON). Own code because prom-client's `observe` validates and joins
 * the label values into a key on every call: about 4 % of a cached `GET /api/v4/user`. Here each
 * method, route and status gets its series once, and an answer only adds to its counters.
 */

const NAME = 'http_request_duration_seconds'
const HELP = 'HTTP request duration in seconds, by method, route and status code'
/** Upper bounds of the buckets, in seconds. */
const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const

interface Labels {
  method: string
  route: string
  status_code: string
}

/** One method, route and status: counts per bucket (the last one past every bound), sum and count. */
export class DurationSeries {
  readonly labels: Labels
  readonly counts = new Float64Array(BUCKETS.length + 1)
  sum = 0
  count = 0

  constructor(labels: Labels) {
    this.labels = labels
  }

  observe(seconds: number): void {
    let i = 0
    while (i < BUCKETS.length && seconds > (BUCKETS[i] as number)) i++
    ;(this.counts[i] as number)++
    this.sum += seconds
    this.count++
  }
}

interface MetricValue {
  labels: Record<string, string | number>
  /** The series' labels, printed after `le` as prom-client's Histogram prints them. */
  sharedLabels: Labels | Record<string, never>
  value: number
  metricName: string
}

export class RequestDurations {
  readonly name = NAME
  readonly help = HELP
  readonly type = 'histogram'
  readonly aggregator = 'sum'
  readonly #series: DurationSeries[] = []

  /** A new series for these labels; the caller keeps it and observes into it. */
  series(method: string, route: string, status: number): DurationSeries {
    const series = new DurationSeries({ method, route, status_code: String(status) })
    this.#series.push(series)
    return series
  }

  /** What the Registry prints: per series, cumulative buckets by `le`, then `+Inf`, sum and count. */
  async getForPromString() {
    const values: MetricValue[] = []
    for (const s of this.#series) {
      let cumulative = 0
      BUCKETS.forEach((le, i) => {
        cumulative += s.counts[i] as number
        values.push({ labels: { le }, sharedLabels: s.labels, value: cumulative, metricName: `${NAME}_bucket` })
      })
      values.push({ labels: { le: '+Inf' }, sharedLabels: s.labels, value: s.count, metricName: `${NAME}_bucket` })
      values.push({ labels: {}, sharedLabels: s.labels, value: s.sum, metricName: `${NAME}_sum` })
      values.push({ labels: {}, sharedLabels: s.labels, value: s.count, metricName: `${NAME}_count` })
    }
    return { name: NAME, help: HELP, type: this.type, values, aggregator: this.aggregator }
  }

  /** The same values with each series' labels merged in (the Registry's JSON). */
  async get() {
    const metric = await this.getForPromString()
    const values = metric.values.map(({ labels, sharedLabels, value, metricName }) => ({
      labels: { ...labels, ...sharedLabels },
      value,
      metricName,
    }))
    return { ...metric, values }
  }

  reset(): void {
    for (const s of this.#series) {
      s.counts.fill(0)
      s.sum = 0
      s.count = 0
    }
  }
}
