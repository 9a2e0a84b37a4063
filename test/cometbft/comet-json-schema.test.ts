import Fastify from 'fastify'
import t from 'tap'
import { cometBlockFromGateway, cometProofOpsFromGateway } from '../../src/cometbft/block-from-proto.js'
import { CometBlock, CometProofOps } from '../../src/cometbft/comet-json-schema.js'
import { HUNDRED_COMMIT_BLOCK, signedBlockAnswer } from '../../harness/chain-simulator/data/commits.js'

// The response schemas decide what a client gets: Fastify's serializer writes a schema's keys,
// in its order, and drops any other. So a converted block sent through them must come out as
// the conversion wrote it, every field kept, in the Go structs' order.

const b64 = (fill: number, length = 32): string => Buffer.alloc(length, fill).toString('base64')
const vote = { type: 'SIGNED_MSG_TYPE_PREVOTE', height: '9', round: 0, block_id: { hash: b64(1), part_set_header: { total: 1, hash: b64(2) } }, timestamp: '2026-01-15T09:00:00Z', validator_address: b64(3, 20), validator_index: 0, signature: b64(4, 64), extension: '', extension_signature: '' }

async function served (schema: object, payload: unknown): Promise<string> {
  const app = Fastify()
  app.get('/', { schema: { response: { 200: schema } } }, async () => payload)
  const res = await app.inject('/')
  await app.close()
  return res.body
}

t.test('a signed block with evidence, through the schema: every field, in the conversion\'s order', async (t) => {
  const gateway = (signedBlockAnswer(HUNDRED_COMMIT_BLOCK) as { block: Record<string, unknown> }).block
  const block = cometBlockFromGateway({
    ...gateway,
    evidence: { evidence: [{ duplicate_vote_evidence: { vote_a: vote, vote_b: vote, total_voting_power: '100', validator_power: '10', timestamp: '2026-01-15T09:00:00Z' } }] }
  })
  t.ok((block.last_commit?.signatures.length ?? 0) > 50, 'a real commit')
  t.equal(await served(CometBlock, block), JSON.stringify(block))
})

t.test('proof ops through the schema: present fields kept, absent ones left out, none as null', async (t) => {
  const ops = cometProofOpsFromGateway({ ops: [{ type: 'ics23:iavl', key: b64(5, 4), data: b64(6, 8) }, { type: 'ics23:simple', data: b64(7, 8) }] })
  t.equal(await served(CometProofOps, ops), JSON.stringify(ops))
  t.equal(await served(CometProofOps, cometProofOpsFromGateway({ ops: [] })), '{"ops":null}')
})
