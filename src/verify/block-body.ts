import { parseBlockBodyInWorker, type TaskOptions } from './workers.js'
import { NamedError } from '../named-error.js'

// Parses POST /v1/verify-block bodies in the worker thread (workers.ts), whatever their size:
// a body at the Cosmos default max_bytes (21 MiB of block, ~28 MiB of JSON) takes ~100 ms of
// JSON.parse, and any body's depth and long integers are checked first (client-json.ts).
// Only the header, last commit and validators come back from the worker.

/** A body that is not JSON: answered 400 with the parser's message, as Fastify's own parser does. */
class BodyJsonError extends NamedError {
  readonly statusCode = 400
}

export async function parseVerifyBlockBody (body: Buffer, options: TaskOptions): Promise<unknown> {
  if (body.length === 0) throw new BodyJsonError("Body cannot be empty when content-type is set to 'application/json'")
  const parsed = await parseBlockBodyInWorker(body, options)
  if (!parsed.ok) throw new BodyJsonError(parsed.error)
  return parsed.value
}
