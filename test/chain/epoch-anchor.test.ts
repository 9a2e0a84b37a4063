import t from 'tap'
import { EpochAnchor, READ_ATTEMPTS, RETRY_MS } from '../../src/chain/epoch-anchor.js'
import type { ChainReader } from '../../src/chain/types.js'
import type { Clock } from '../../src/clock.js'

/** A clock whose pauses pass at once, each noted. */
function instantClock (pauses: number[] = []): Clock {
  return { now: () => 0, after: (ms, fn) => { pauses.push(ms); setImmediate(fn); return () => {} } }
}

const info = (index: number, start: number) => ({ params: { epoch_params: { epoch_length: '100', poc_stage_duration: 20 } }, latest_epoch: { index: String(index), poc_start_block_height: String(start) } })

t.test('read once per epoch, shared; kept when a read fails', async (t) => {
  const answers: unknown[] = [info(5, 1000), info(6, 1100)]
  let reads = 0
  const chain = { get: async () => { reads++; const next = answers.shift(); if (next === undefined) throw new Error('down'); return next } } as unknown as ChainReader
  const pauses: number[] = []
  const anchor = new EpochAnchor(chain, instantClock(pauses))
  const [a, b] = await Promise.all([anchor.at(1000), anchor.at(1050)])
  t.equal(reads, 1, 'one read for both')
  t.same(a, b)
  t.equal(a?.index, 5n)
  t.equal(a?.params.epochLength, 100n)
  t.equal(a?.params.pocStageDuration, 20n)
  t.equal(a?.params.epochShift, 0n, 'absent is 0, as in Go')
  t.equal((await anchor.at(1099))?.index, 5n)
  t.equal(reads, 1)
  t.equal((await anchor.at(1100))?.index, 6n, 'past its epoch: read again')
  t.equal((await anchor.at(1200))?.index, 6n, 'reads that fail keep the one known')
  t.equal(reads, 2 + READ_ATTEMPTS, 'after READ_ATTEMPTS reads')
  t.same(pauses, [RETRY_MS, RETRY_MS * 2, RETRY_MS * 4], 'with growing pauses between')
  const empty = await new EpochAnchor({ get: async () => ({ params: { epoch_params: null }, latest_epoch: null }) } as unknown as ChainReader).at(1)
  t.same([empty?.index, empty?.pocStartBlockHeight, empty?.params.epochLength], [0n, 0n, 0n], 'fields left out are 0')
  t.equal((await new EpochAnchor({ get: async () => ({}) } as unknown as ChainReader).at(1))?.index, 0n)
  t.equal(await new EpochAnchor({ get: async () => null } as unknown as ChainReader, instantClock()).at(1), undefined, 'nothing readable: none')
})

t.test('a read that fails and then succeeds gives the anchor: the stages and epochs the other replicas send (D10)', async (t) => {
  let reads = 0
  const chain = { get: async () => { if (++reads < READ_ATTEMPTS) throw new Error('timeout'); return info(5, 1000) } } as unknown as ChainReader
  t.equal((await new EpochAnchor(chain, instantClock()).at(1000))?.index, 5n, `read on attempt ${READ_ATTEMPTS}`)
  const defaultClock = new EpochAnchor({ get: async () => info(7, 700) } as unknown as ChainReader)
  t.equal((await defaultClock.at(700))?.index, 7n, 'the real clock by default')
})
