// Where the schemas served deliberately differ from the fields of the chain version they follow
// (src/wire/chain-version.ts), each with the client or reason. test/wire/chain-version.test.ts
// fails on any other difference, and on an entry here that no longer differs. A difference on
// the wire from the newest Go is in docs/clients.md and scripts/compat/known-differences.ts too.

export interface ChainDifference {
  /** The message's full name. */
  readonly message: string
  readonly field: string
  /**
   * not-served: the chain version has the field, no schema serves it.
   * not-in-chain: a schema serves it, the chain version lacks it.
   * enum-as-number: an enum Go writes by name, served as its number.
   */
  readonly kind: 'not-served' | 'not-in-chain' | 'enum-as-number'
  readonly why: string
}

export const CHAIN_DIFFERENCES: readonly ChainDifference[] = [
  {
    message: 'inference.inference.ConfirmationPoCEvent',
    field: 'recipe',
    kind: 'not-in-chain',
    why: 'a later chain adds PocStageRecipe recipe (gonka-ai/gonka confirmation_poc_event.proto@7c3e29b9); it is written only when ' +
      'the gateway sends the key, so against this version there is no key, as Go writes'
  },
  {
    message: 'inference.bls.EpochBLSData',
    field: 'dkg_phase',
    kind: 'enum-as-number',
    why: 'inc4/gonka-exporter-go reads DKG_PHASE_DISPUTING by name as 0, testermint reads only numbers (docs/clients.md)'
  },
  {
    message: 'inference.bls.ThresholdSigningRequest',
    field: 'status',
    kind: 'enum-as-number',
    why: 'testermint BLSDKGSuccessTest does status.toString().toInt() (docs/clients.md)'
  }
]
