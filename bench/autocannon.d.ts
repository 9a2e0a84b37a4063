// The part of autocannon's API the bench uses (the package ships no types, and
// @types/autocannon would be a dependency for one file).
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events'

  namespace autocannon {
    interface Request { readonly method?: 'GET' | 'POST', readonly path?: string }
    interface Options {
      url: string
      connections?: number
      pipelining?: number
      duration?: number
      amount?: number
      overallRate?: number | undefined
      timeout?: number
      requests?: Request[]
    }
    interface Histogram { average: number, mean: number, total: number, p50: number, p99: number }
    interface Result {
      duration: number
      errors: number
      timeouts: number
      non2xx: number
      requests: Histogram
      latency: Histogram
      statusCodeStats?: Record<string, { count: number }>
    }
    type Instance = EventEmitter & PromiseLike<Result>
  }
  function autocannon (options: autocannon.Options): autocannon.Instance
  export default autocannon
}
