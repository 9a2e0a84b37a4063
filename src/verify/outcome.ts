import { deserialize, serialize } from 'node:v8'

// How a task's outcome crosses back from the worker thread: as bytes the task serialised
// itself, read here inside a try. Piscina hands a task's value to the port's structured
// clone, and a value the event loop cannot deserialise (a body nested thousands deep) makes
// the port emit 'messageerror', which Piscina does not handle: the task would never settle.
// Bytes always arrive; a failure to read them is an error of this task, thrown here.
// An Error's class does not survive the copy either, so a task's failure is a message.

/** A task's outcome: its value, or the message of the error it ended with. */
export type Outcome<T = undefined> = { readonly ok: true, readonly value: T } | { readonly ok: false, readonly error: string }

export function encodeOutcome (outcome: Outcome<unknown>): Uint8Array {
  return serialize(outcome)
}

export function decodeOutcome<T> (bytes: Uint8Array): Outcome<T> {
  try {
    return deserialize(bytes) as Outcome<T>
  } catch (err) {
    throw new Error(`the worker's answer could not be read: ${(err as Error).message}`)
  }
}
