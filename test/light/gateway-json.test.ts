import t from 'tap'
import { gatewayBlock, LightJsonError, validatorPage, validatorSetOf } from '../../src/light/gateway-json.js'
import { blockJson, validatorSetJson } from '../../harness/chain-simulator/chain-json.js'
import { SignedChain } from '../../harness/chain-simulator/signed-chain.js'
import { LATEST_HEIGHT } from '../../harness/chain-simulator/data/epochs.js'

// The gateway's protojson read back as CometBFT's types: what the simulator's signed chain
// wrote (harness/chain-simulator/chain-json.ts, the gateway's shape) comes back the same, and
// an answer that cannot be read is refused naming the field.

const HEIGHT = LATEST_HEIGHT - 5
const chain = new SignedChain({ validators: 100, firstHeight: HEIGHT - 3 })
const { header, blockId } = chain.block(HEIGHT)
const answer = blockJson(header, blockId, chain.block(HEIGHT - 1).commit) as { block: { header: Record<string, unknown> } }

t.test('a block: its header field for field, and the commit for the height below', async (t) => {
  const block = gatewayBlock(answer)
  t.same(block.header, header)
  t.same(block.lastCommit, chain.block(HEIGHT - 1).commit)
  const noApp = gatewayBlock({ block: { ...answer.block, header: { ...answer.block.header, version: { block: '11' }, app_hash: null }, last_commit: null } })
  t.equal(noApp.header.version.app, 0n, 'an absent app version is 0')
  t.same(noApp.header.appHash, new Uint8Array(), 'a null hash is empty')
  t.equal(noApp.lastCommit, undefined, 'no commit carried')
})

t.test('a block that cannot be read is refused naming the field', async (t) => {
  const withHeader = (fields: Record<string, unknown>): unknown => ({ block: { ...answer.block, header: { ...answer.block.header, ...fields } } })
  const cases: Array<[unknown, string]> = [
    [null, 'answer: must be an object'],
    [{ block: [] }, 'block: must be an object'],
    [withHeader({ time: 'yesterday' }), 'block.header.time: must be an RFC 3339 time'],
    [withHeader({ time: 5 }), 'block.header.time: must be an RFC 3339 time'],
    [withHeader({ height: 12 }), 'block.header.height: must be a decimal string'],
    [withHeader({ chain_id: 1 }), 'block.header.chain_id: must be a string'],
    [withHeader({ data_hash: '***' }), 'block.header.data_hash: must be base64'],
    [withHeader({ data_hash: 7 }), 'block.header.data_hash: must be base64'],
    [withHeader({ last_block_id: { hash: '', part_set_header: { total: -1 } } }), 'block.header.last_block_id.part_set_header.total: must be a uint32'],
    [{ block: { ...answer.block, last_commit: { block_id: 'x' } } }, 'block.last_commit.block_id: must be an object']
  ]
  for (const [value, message] of cases) t.throws(() => gatewayBlock(value), new LightJsonError(message), message)
  t.same(gatewayBlock(withHeader({ last_block_id: { hash: null, part_set_header: {} } })).header.lastBlockId, { hash: new Uint8Array(), partSetHeader: { total: 0, hash: new Uint8Array() } }, 'an empty block ID')
})

t.test('validator pages: the inputs and the total; the set CometBFT would build, or its refusal', async (t) => {
  const set = chain.validatorSet(HEIGHT)
  const first = validatorPage(validatorSetJson(HEIGHT, set, new URL('http://x/?pagination.offset=0&pagination.limit=60')))
  const second = validatorPage(validatorSetJson(HEIGHT, set, new URL('http://x/?pagination.offset=60&pagination.limit=60')))
  t.equal(first.total, 100)
  t.same([first.validators.length, second.validators.length], [60, 40])
  t.same(validatorSetOf([...first.validators, ...second.validators]), set)
  t.throws(() => validatorSetOf([...first.validators, ...first.validators]), { name: 'LightJsonError', message: /^validators: duplicate entry/ })
  t.throws(() => validatorPage({ validators: {} }), { message: 'validators: must be an array' })
  t.throws(() => validatorPage({ validators: [], pagination: { total: '-1' } }), { message: 'pagination.total: must be a count' })
  t.throws(() => validatorPage({ validators: [{ pub_key: { key: 'AA==' }, voting_power: 'ten' }], pagination: { total: '1' } }), { message: 'validators[0].voting_power: must be a decimal string' })
})
