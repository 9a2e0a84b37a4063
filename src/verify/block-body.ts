import { Piscina } from 'piscina'
import { readVerifyBlockBody, type ParsedBody } from './block-body-worker.js'

// Parses POST /v1/verify-block bodies without holding the event loop: up to `inlineLimit`
// bytes (1 MiB: ~4-5 ms of JSON.parse, measured) inline, anything larger in a worker thread
// whose only job is that parse. Measured on this machine: 4 MiB take ~7-11 ms and 16 MiB
// ~55-70 ms of JSON.parse, longer than the ~20 ms the event loop may be held, and a block
// at the Cosmos default max_bytes (21 MiB) is ~28 MiB of JSON. The body bytes move to the
// worker without a copy; only the header, last commit and validators come back.
//
// One thread, started on the first large body and stopped after a minute without one: large
// bodies are rare, and the route group's own admission limit already bounds how many wait.

export const INLINE_BODY_LIMIT = 1024 * 1024

/** A body that is not JSON: answered 400 with the parser's message, as Fastify's own parser does. */
class BodyJsonError extends Error {
  readonly statusCode = 400

  constructor (message: string) {
    super(message)
    this.name = 'BodyJsonError'
  }
}

// The worker module next to this one: .ts under the test runner, .js once built.
const WORKER = new URL(`./block-body-worker${import.meta.url.slice(import.meta.url.lastIndexOf('.'))}`, import.meta.url).href

export class BlockBodyParser {
  readonly #inlineLimit: number
  #pool: Piscina | undefined

  constructor (inlineLimit = INLINE_BODY_LIMIT) {
    this.#inlineLimit = inlineLimit
  }

  async parse (body: Buffer): Promise<unknown> {
    if (body.length === 0) throw new BodyJsonError("Body cannot be empty when content-type is set to 'application/json'")
    let parsed: ParsedBody
    if (body.length <= this.#inlineLimit) {
      parsed = readVerifyBlockBody(body)
    } else {
      // Buffer.concat gives a large body its own ArrayBuffer, so it can be transferred whole;
      // a view into a shared one is copied first (transferring would detach the others).
      const bytes = body.byteOffset === 0 && body.byteLength === body.buffer.byteLength ? body : new Uint8Array(body)
      parsed = await this.#workers().run(bytes, { transferList: [bytes.buffer as ArrayBuffer] }) as ParsedBody
    }
    if (!parsed.ok) throw new BodyJsonError(parsed.error)
    return parsed.body
  }

  /** Whether the worker thread has been started (large bodies only). */
  get started (): boolean {
    return this.#pool !== undefined
  }

  async close (): Promise<void> {
    await this.#pool?.destroy()
  }

  #workers (): Piscina {
    this.#pool ??= new Piscina({ filename: WORKER, minThreads: 0, maxThreads: 1, idleTimeout: 60_000 })
    return this.#pool
  }
}
