/** A wait's time limit unless its caller says: far above any wait a passing test makes on a loaded 2-core machine, far below tap's 300 s. */
export const WAIT_LIMIT_MS = 30_000

/**
 * `promise`, or a rejection naming `what` once `ms` have passed: every wait in a test ends, and
 * a feature switched off fails by the name of what never came instead of tap's anonymous
 * per-file timeout. The timer is cleared as soon as the promise settles (it holds nothing open).
 */
export async function within<T> (promise: Promise<T>, what: string, ms = WAIT_LIMIT_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const expired = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms)
  })
  try {
    return await Promise.race([promise, expired])
  } finally {
    clearTimeout(timer)
  }
}
