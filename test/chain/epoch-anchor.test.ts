import t from 'tap'
import { EpochAnchor } from '../../src/chain/epoch-anchor.js'
import type { ChainReader } from '../../src/chain/types.js'

const info = (index: number, start: number) => ({ params: { epoch_params: { epoch_length: '100', poc_stage_duration: 20 } }, latest_epoch: { index: String(index), poc_start_block_height: String(start) } })

t.test('read once per epoch, shared; kept when a read fails', async (t) => {
  const answers: unknown[] = [info(5, 1000), info(6, 1100)]
  let reads = 0
  const chain = { get: async () => { reads++; const next = answers.shift(); if (next === undefined) throw new Error('down'); return next } } as unknown as ChainReader
  const anchor = new EpochAnchor(chain)
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
  t.equal((await anchor.at(1200))?.index, 6n, 'a failed read keeps the one known')
  t.equal(reads, 3)
  const empty = await new EpochAnchor({ get: async () => ({ params: { epoch_params: null }, latest_epoch: null }) } as unknown as ChainReader).at(1)
  t.same([empty?.index, empty?.pocStartBlockHeight, empty?.params.epochLength], [0n, 0n, 0n], 'fields left out are 0')
  t.equal((await new EpochAnchor({ get: async () => ({}) } as unknown as ChainReader).at(1))?.index, 0n)
  t.equal(await new EpochAnchor({ get: async () => null } as unknown as ChainReader).at(1), undefined, 'nothing readable: none')
})
