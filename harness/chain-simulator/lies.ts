// What a node of the simulated chain can lie about (the simulator's `lies`, switched at run
// time by a test). Each is a lie the light client and the proof checks must catch, unlike a
// node that is merely behind (the simulator's `lag`), whose blocks verify, only lower.

export interface Lies {
  /** abci_query answers carry a changed value with the proof of the true one, which does not verify. */
  forgedValue: boolean
  /** From this height on, headers carry a changed app hash the validators never signed. */
  forgedAppHashFrom: number | undefined
  /** From this height on, the node serves a fork whose commits are signed by less than a third of the power. */
  forkFrom: number | undefined
}

export function noLies (): Lies {
  return { forgedValue: false, forgedAppHashFrom: undefined, forkFrom: undefined }
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
