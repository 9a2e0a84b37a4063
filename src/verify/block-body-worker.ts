// The JSON body of POST /v1/verify-block, parsed, keeping only what the route reads: the
// block's header and last commit, and the validators. A real block carries its
// transactions too, megabytes of them; JSON.parse costs about 3.5 ms per MiB here, so a large
// body is parsed in a worker thread (block-body.ts) and only this small part crosses back.
// Runs both in the worker (its default export) and inline for small bodies.

/** The parse's outcome; a copy crosses back from the worker, so failure is a value, not a throw. */
export type ParsedBody = { readonly ok: true, readonly body: unknown } | { readonly ok: false, readonly error: string }

/** Parses `json` (UTF-8 bytes or text). */
export function readVerifyBlockBody (json: Uint8Array | string): ParsedBody {
  const text = typeof json === 'string' ? json : Buffer.from(json.buffer, json.byteOffset, json.byteLength).toString('utf8')
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch (err) {
    return { ok: false, error: (err as SyntaxError).message }
  }
  if (!isObject(body)) return { ok: true, body }
  const { block, validators } = body
  // Built fresh from named keys only: nothing of the client's object (a "__proto__" key
  // included) is carried over but the values the route reads.
  return {
    ok: true,
    body: {
      block: isObject(block) ? { header: block.header, last_commit: block.last_commit } : block,
      validators
    }
  }
}

function isObject (value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

export default readVerifyBlockBody
