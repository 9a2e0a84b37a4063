import { KEEPS_ALIVE, type Clock } from '../clock.js'

// A store command's deadline (src/shared/store.ts). It is ours, not the client's: node-redis's
// own timeout covers only a command not yet written, and a frozen store has every command
// written and none answered. Two things keep a busy replica from taking its own delay for a
// frozen store:
// - a timer that fires more than a deadline late says this replica's event loop stalled (a GC
//   pause, a long tick), so the command may not even be on the wire yet: it gets its deadline
//   once more, from now;
// - a deadline that is due is judged only after the I/O already waiting has been read: a reply
//   that arrived during a stall wins.
// The second is a loop phase, not a duration, so it is the one timer here outside the Clock:
// setImmediate runs after the poll phase, which the Clock has no way to say.

export const TIMED_OUT = Symbol('timed out')

/** `reply`, or TIMED_OUT once `ms` has passed on `clock` (a stall of this process not counted); never rejects on the deadline's account. */
export async function withinDeadline<T> (reply: Promise<T>, clock: Clock, ms: number): Promise<T | typeof TIMED_OUT> {
  let cancel!: () => void
  const expired = new Promise<typeof TIMED_OUT>((resolve) => {
    const armedAt = clock.now()
    let extended = false
    const due = (): void => {
      if (!extended && clock.now() - armedAt > 2 * ms) {
        extended = true
        cancel = clock.after(ms, due, KEEPS_ALIVE)
        return
      }
      const immediate = setImmediate(resolve, TIMED_OUT)
      cancel = () => { clearImmediate(immediate) }
    }
    // The deadline's timer keeps the process alive, as the command's own socket does.
    cancel = clock.after(ms, due, KEEPS_ALIVE)
  })
  try {
    return await Promise.race([reply, expired])
  } finally {
    cancel()
  }
}
