import t from 'tap'
import { buildTestApp } from '../fixtures/app.js'
import { COMPLETED_REQUEST_ID } from '../../harness/chain-simulator/data/bls.js'
import { POC_START } from '../../harness/chain-simulator/data/epochs.js'
import { LATEST_BLOCK_PATH } from '../../src/chain/paths.js'
import type { FastifyRequest } from 'fastify'
import { answerKeyOf, canonicalValue, keyAt } from '../../src/cache/answer-key.js'

// Canonical keys (review A9): the spellings a route reads as one value are one key.

t.test('a value in one spelling: integers without sign or leading zeros, hex in lower case, the rest as sent', async (t) => {
  t.equal(canonicalValue('05', 'integer'), '5')
  t.equal(canonicalValue('+5', 'integer'), '5')
  t.equal(canonicalValue('-0', 'integer'), '0')
  t.equal(canonicalValue('000000000000000000000000000123', 'integer'), '123')
  t.equal(canonicalValue('current', 'integer'), 'current', 'a word is no number')
  t.equal(canonicalValue('0A0b', 'hex'), '0a0b')
  t.equal(canonicalValue('05', undefined), '05', 'a parameter with one spelling per value')
})

t.test('spellings of one value share one key: one chain read, one ETag, the second a hit', async (t) => {
  const { app, sim } = await buildTestApp(t, { env: { EDGE_API_CACHE_SIZE: '1MiB', EDGE_API_HEAD_MAX_AGE: '1m' } })
  await app.inject('/v1/participants') // the head is known
  const spellings = [
    [`/v1/poc-batches/${POC_START}`, `/v1/poc-batches/0${POC_START}`, `/v1/poc-batches/+${POC_START}`],
    ['/v1/bls/epoch/7', '/v1/bls/epoch/007'],
    [`/v1/bls/signatures/${COMPLETED_REQUEST_ID}`, `/v1/bls/signatures/${COMPLETED_REQUEST_ID.toUpperCase()}`]
  ]
  for (const [first, ...others] of spellings as Array<[string, ...string[]]>) {
    sim.resetCounts()
    const built = await app.inject(first)
    t.equal(built.statusCode, 200, first)
    t.equal(built.headers['x-cache'], 'miss')
    const reads = sim.requests.filter((r) => !r.startsWith(LATEST_BLOCK_PATH)).length
    for (const url of others) {
      const again = await app.inject(url)
      t.equal(again.headers['x-cache'], 'hit', url)
      t.equal(again.headers.etag, built.headers.etag)
      t.equal(again.body, built.body)
    }
    t.equal(sim.requests.filter((r) => !r.startsWith(LATEST_BLOCK_PATH)).length, reads, `${first}: no chain read for the other spellings`)
  }
})

/** The request fields a key is built from. */
const asRequest = (params: Record<string, string>, query: Record<string, string> = {}): FastifyRequest => ({ params, query }) as unknown as FastifyRequest

t.test('other values are other keys (another answer, never this one\'s); undeclared query parameters change nothing', async (t) => {
  const keyOf = answerKeyOf('/v1/bridge/:epoch', { epoch: 'integer' }, ['chain'])
  const key = keyOf(asRequest({ epoch: '5' }, { chain: 'eth' }))
  t.equal(keyOf(asRequest({ epoch: '05' }, { chain: 'eth', utm: 'x' })), key, 'the same value, another spelling, an undeclared parameter: one key')
  t.not(keyOf(asRequest({ epoch: '6' }, { chain: 'eth' })), key, 'another path parameter')
  t.not(keyOf(asRequest({ epoch: '5' }, { chain: 'btc' })), key, 'another declared query parameter')
  t.not(answerKeyOf('/v1/other/:epoch', { epoch: 'integer' }, ['chain'])(asRequest({ epoch: '5' }, { chain: 'eth' })), key, 'another route')
})

t.test('a key read at a height is another key at every height; a fixed answer\'s key carries none', async (t) => {
  t.not(keyAt('k', 5), keyAt('k', 6))
  t.not(keyAt('k', 5), 'k')
  t.equal(keyAt('k', undefined), 'k', 'its ETag, tagOf(key), stays the same from one build to the next')
})
