import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type, type Static } from 'typebox'
import { chainPath } from '../../chain/paths.js'
import { HttpError, notFound } from '../../errors.js'
import { Int64, int64, type Int64Value } from '../../wire/schema.js'
import { AddressParam, Nullable, withChainErrors } from './schemas.js'

const PAGE_LIMIT = '1000'
// A chain that keeps answering with a next_key would otherwise keep this request alive
// forever; 1000 pages of 1000 is far beyond any real participant set.
const MAX_PAGES = 1000
const BALANCE_DENOM = 'ngonka'

const Participant = Type.Object({
  id: Type.String(),
  url: Type.String(),
  coins_owed: Int64(),
  refunds_owed: Int64({ description: 'always 0: not tracked on chain' }),
  balance: Int64({ description: `amount of ${BALANCE_DENOM}, 0 when the account holds none` }),
  voting_power: Int64(),
  reputation: Int64({ description: 'always 0: not tracked on chain' })
})

const ParticipantsResponse = Type.Object({
  participants: Nullable(Type.Array(Participant)),
  block_height: Int64()
})

const AccountResponse = Type.Object({
  pubkey: Type.String(),
  balance: Int64(),
  denom: Type.String()
})

interface GatewayParticipantsPage {
  participants?: Array<{
    participant?: { address?: string, inference_url?: string, coin_balance?: string, weight?: number | string }
    balances?: Array<{ denom?: string, amount?: string }>
  }>
  pagination?: { next_key?: string | null }
  block_height?: string
}

interface GatewayAccount { pubkey?: string, balance?: string, denom?: string }

export const participants: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/participants', {
    schema: {
      summary: 'Every participant with its balance, across all pages of the chain query',
      response: withChainErrors(ParticipantsResponse)
    }
  }, async (request) => {
    const list: Array<Static<typeof Participant>> = []
    let blockHeight: Int64Value = 0
    let key: string | undefined
    for (let page = 0; page < MAX_PAGES; page++) {
      const answer = await request.chain.get('/productscience/inference/inference/participants_with_balances', {
        'pagination.key': key,
        'pagination.limit': PAGE_LIMIT
      }) as GatewayParticipantsPage
      if (page === 0) blockHeight = int64(answer.block_height)
      for (const entry of answer.participants ?? []) list.push(toParticipant(entry))
      key = answer.pagination?.next_key ?? undefined
      if (key === undefined || key === '') return { participants: list.length > 0 ? list : null, block_height: blockHeight }
    }
    throw new HttpError(500, `chain kept paginating participants beyond ${MAX_PAGES} pages`)
  })

  app.get('/participants/:address', {
    schema: {
      summary: 'One account: public key and balance',
      params: Type.Object({ address: AddressParam }),
      response: withChainErrors(AccountResponse)
    }
  }, async (request) => {
    const answer = await request.chain.get(chainPath`/productscience/inference/inference/inference_participant/${request.params.address}`) as GatewayAccount | null
    if (answer === null || typeof answer !== 'object') throw notFound('Account not found')
    return { pubkey: answer.pubkey ?? '', balance: int64(answer.balance), denom: answer.denom ?? '' }
  })
}

function toParticipant (entry: NonNullable<GatewayParticipantsPage['participants']>[number]): Static<typeof Participant> {
  const p = entry.participant ?? {}
  const coin = entry.balances?.find((b) => b.denom === BALANCE_DENOM)
  return {
    id: p.address ?? '',
    url: p.inference_url ?? '',
    coins_owed: int64(p.coin_balance),
    refunds_owed: 0,
    balance: int64(coin?.amount),
    voting_power: int64(p.weight),
    reputation: 0
  }
}
