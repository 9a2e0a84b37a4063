/**
 * Time as the chain client's own logic sees it: a monotonic reading in ms and timers. The
 * real one is performance.now() and setTimeout; tests pass a clock they step by hand, so
 * what a duration decides (a probe's backoff, a hedge's delay, the hedge budget's window)
 * does not depend on how busy the machine running them is.
 */
export interface Clock {
  /** Monotonic ms. */
  now (): number
  /** Calls `fn` once, `ms` from now; the returned function cancels it. Never keeps the process alive. */
  after (ms: number, fn: () => void): () => void
}

export const REAL_CLOCK: Clock = {
  now: () => performance.now(),
  after: (ms, fn) => {
    const timer = setTimeout(fn, ms)
    timer.unref()
    return () => clearTimeout(timer)
  }
}
