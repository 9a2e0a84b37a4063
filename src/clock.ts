/**
 * Time as the service's own logic sees it: a monotonic reading in ms and timers. The one way
 * time is injected (issue 35): the real one is performance.now() and setTimeout; tests pass a
 * clock they step by hand (test/fixtures/manual-clock.ts), so what a duration decides (a
 * probe's backoff, a hedge's delay, a head's age, a cached probe, the drain's windows) does
 * not depend on how busy the machine running them is.
 */
export interface Clock {
  /** Monotonic ms. */
  now (): number
  /** Calls `fn` once, `ms` from now; the returned function cancels it. */
  after (ms: number, fn: () => void, options?: AfterOptions): () => void
}

export interface AfterOptions {
  /**
   * Whether the pending timer keeps the process alive. Off by default: a probe's backoff or a
   * hedge's delay must never hold a process that has nothing else to do. The drain's windows
   * (the announcement, the shutdown budget) are the process's last work, and keep it (KEEPS_ALIVE). @default false
   */
  readonly keepsAlive?: boolean
}

/** For a timer that is the process's work (the drain's windows, a read waiting for a height): it keeps the process alive. */
export const KEEPS_ALIVE: AfterOptions = Object.freeze({ keepsAlive: true })

export const REAL_CLOCK: Clock = {
  now: () => performance.now(),
  after: (ms, fn, options) => {
    const timer = setTimeout(fn, ms)
    if (options?.keepsAlive !== true) timer.unref()
    return () => clearTimeout(timer)
  }
}

/** Resolves `ms` from now on `clock`: an awaitable after(). */
export async function pause (clock: Clock, ms: number, options?: AfterOptions): Promise<void> {
  await new Promise<void>((resolve) => { clock.after(ms, resolve, options) })
}
