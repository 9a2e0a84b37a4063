import t from 'tap'
import { buildTestApp } from '../fixtures/app.js'
import { COMPLETED_REQUEST_ID } from '../../harness/chain-simulator/data/bls.js'
import { POC_START } from '../../harness/chain-simulator/data/epochs.js'
import { LATEST_BLOCK_PATH } from '../../src/chain/paths.js'
import { canonicalValue } from '../../src/cache/answer-key.js'

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
