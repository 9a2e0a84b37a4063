import { parseBlockBody, type Outcome } from './worker.js'
import { parseBlockBodyInWorker } from './workers.js'

// Parses POST /v1/verify-block bodies without holding the event loop: up to `inlineLimit`
// bytes inline (1 MiB: ~4-5 ms of JSON.parse, measured), anything larger in the worker thread
// (workers.ts). Measured on this machine: 4 MiB take ~7-11 ms and 16 MiB ~55-70 ms of
// JSON.parse, longer than the ~20 ms the event loop may be held, and a block at the Cosmos
// default max_bytes (21 MiB) is ~28 MiB of JSON. Only the header, last commit and validators
// come back from the worker.

export const INLINE_BODY_LIMIT = 1024 * 1024

/** A body that is not JSON: answered 400 with the parser's message, as Fastify's own parser does. */
class BodyJsonError extends Error {
  readonly statusCode = 400

  constructor (message: string) {
    super(message)
    this.name = 'BodyJsonError'
  }
}

export async function parseVerifyBlockBody (body: Buffer, inlineLimit = INLINE_BODY_LIMIT): Promise<unknown> {
  if (body.length === 0) throw new BodyJsonError("Body cannot be empty when content-type is set to 'application/json'")
  const parsed: Outcome<unknown> = body.length <= inlineLimit ? parseBlockBody(body) : await parseBlockBodyInWorker(body)
  if (!parsed.ok) throw new BodyJsonError(parsed.error)
  return parsed.value
}
