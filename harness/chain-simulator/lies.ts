// What a node of the simulated chain can lie about (the simulator's `lies`, switched at run
// time by a test). Each is a lie the light client and the proof checks must catch, unlike a
// node that is merely behind (the simulator's `lag`), whose blocks verify, only lower.

export interface Lies {
  /** abci_query answers carry a changed value with the proof of the true one, which does not verify. */
  forgedValue: boolean
  /**
   * The inference module's REST answers carry changed numbers (an epoch length, a unit of
   * compute price, a model's context window: FORGED_FIELDS), its proofs the true values': an
   * answer its own proofs contradict.
   */
  forgedAnswers: boolean
  /** From this height on, headers carry a changed app hash the validators never signed. */
  forgedAppHashFrom: number | undefined
  /** From this height on, the node serves a fork whose commits are signed by less than a third of the power. */
  forkFrom: number | undefined
}

export function noLies (): Lies {
  return { forgedValue: false, forgedAnswers: false, forgedAppHashFrom: undefined, forkFrom: undefined }
}

/** An app hash no validator signed: the true one with its first byte changed. */
export function forgedAppHash (appHash: Uint8Array): Uint8Array {
  const forged = Uint8Array.from(appHash)
  forged[0] = (forged[0] as number) ^ 0xff
  return forged
}

/** An abci_query answer whose value is changed and whose proof is still the true value's (a value that is absent stays absent). */
export function forgeValue (body: unknown): unknown {
  const answer = body as { value?: unknown }
  if (typeof answer.value !== 'string') return body
  const value = Buffer.from(answer.value, 'base64')
  const forged = Buffer.concat([value.subarray(0, -1), Buffer.of((value.at(-1) ?? 0) ^ 0x01)])
  return { ...answer, value: forged.toString('base64') }
}

/** The fields forgedAnswers changes, wherever they are in an inference REST answer: each one more than the truth. */
export const FORGED_FIELDS: ReadonlySet<string> = new Set(['epoch_length', 'unit_of_compute_price', 'context_window'])

/** An inference REST answer with every FORGED_FIELDS number one more (a copy; other answers as they are). */
export function forgeAnswer (pathname: string, body: unknown): unknown {
  return pathname.startsWith('/productscience/inference/') ? forged(body) : body
}

function forged (value: unknown): unknown {
  if (Array.isArray(value)) return value.map(forged)
  if (value === null || typeof value !== 'object') return value
  return Object.fromEntries(Object.entries(value).map(([key, field]) => [key, FORGED_FIELDS.has(key) && /^\d+$/.test(String(field)) ? String(BigInt(String(field)) + 1n) : forged(field)]))
}
