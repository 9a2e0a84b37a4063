import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { fromProtoJson, ProtoMessage } from '../../wire/encoding-json.js'
import { Uint64 } from '../../wire/schema.js'
import { AddressParam, Nullable, withChainErrors } from './schemas.js'

// The transfer-restrictions module (inference.restrictions), answered as the Go service did:
// Go's encoding/json over the gogoproto structs (uint64 as numbers, zero fields left out).

const GATEWAY = '/productscience/inference/restrictions'

/** cosmos.base.query.v1beta1.PageResponse. */
const PageResponse = ProtoMessage({
  next_key: Type.String({ description: 'base64' }),
  total: Uint64()
})

/** QueryTransferRestrictionStatusResponse. */
const RestrictionStatus = ProtoMessage({
  is_active: Type.Boolean(),
  restriction_end_block: Uint64(),
  current_block_height: Uint64(),
  remaining_blocks: Uint64()
})

/** EmergencyTransferExemption: a governance-approved transfer template. */
const EmergencyTransferExemption = ProtoMessage({
  exemption_id: Type.String(),
  from_address: Type.String({ description: 'an address, or "*" for any' }),
  to_address: Type.String({ description: 'an address, or "*" for any' }),
  max_amount: Type.String({ description: 'decimal amount per use' }),
  usage_limit: Uint64({ description: 'uses per account' }),
  expiry_block: Uint64(),
  justification: Type.String()
})

/** ExemptionUsage: how often one account used one exemption. */
const ExemptionUsage = ProtoMessage({
  exemption_id: Type.String(),
  account_address: Type.String(),
  usage_count: Uint64()
})

// The repeated fields are non-nullable in gogoproto, so their JSON tags have no omitempty:
// the key is always there, first, and null when the list is empty (a nil slice after decoding).
const ExemptionsResponse = Type.Object({
  exemptions: Nullable(Type.Array(EmergencyTransferExemption)),
  pagination: Type.Optional(PageResponse)
})

const UsageResponse = Type.Object({
  usage_entries: Nullable(Type.Array(ExemptionUsage)),
  pagination: Type.Optional(PageResponse)
})

/** An exemption id as governance writes them, e.g. emergency-infrastructure-001. */
const ExemptionIdParam = Type.String({
  pattern: '^[A-Za-z0-9._:-]{1,128}$',
  description: 'must be 1 to 128 letters, digits, ".", "_", ":" or "-"'
})

export const restrictions: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/restrictions/status', {
    schema: {
      summary: 'Whether user-to-user transfers are restricted, and for how many more blocks',
      response: withChainErrors(RestrictionStatus)
    }
  }, async (request) => {
    const answer = await request.chain.get(`${GATEWAY}/status`)
    return fromProtoJson(RestrictionStatus, answer) ?? {}
  })

  app.get('/restrictions/exemptions', {
    schema: {
      summary: 'Emergency transfer exemptions approved by governance',
      response: withChainErrors(ExemptionsResponse)
    }
  }, async (request) => {
    const out = fromProtoJson(ExemptionsResponse, await request.chain.get(`${GATEWAY}/exemptions`))
    return { exemptions: out?.exemptions ?? null, ...out }
  })

  app.get('/restrictions/exemptions/:id/usage/:account', {
    schema: {
      summary: 'How often an account used an exemption',
      params: Type.Object({ id: ExemptionIdParam, account: AddressParam }),
      response: withChainErrors(UsageResponse)
    }
  }, async (request) => {
    const answer = await request.chain.get(`${GATEWAY}/exemption_usage`, {
      exemption_id: request.params.id,
      account_address: request.params.account
    })
    const out = fromProtoJson(UsageResponse, answer)
    return { usage_entries: out?.usage_entries ?? null, ...out }
  })
}
