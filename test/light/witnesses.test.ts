import t from 'tap'
import { KEPT_HEIGHTS, Witnesses } from '../../src/light/witnesses.js'

// The nodes as witnesses of each other: a node that told another hash at a height verified is
// named, whichever came first; a node behind (lower heights, same hashes) is not.

const hash = (n: number): Uint8Array => Buffer.alloc(32, n)

t.test('a hash told against one verified, either order; the same hash, or a height not verified, is no lie', async (t) => {
  const w = new Witnesses(3)
  t.equal(w.told(0, 10n, hash(1)), false, 'nothing verified at 10 yet')
  t.equal(w.told(1, 10n, hash(2)), false)
  t.equal(w.told(2, 9n, hash(9)), false, 'a node behind tells a lower height')
  t.same(w.verified(10n, hash(1)), [1], 'node 2 told another hash for 10')
  t.equal(w.told(2, 10n, hash(1)), false, 'the same hash')
  t.equal(w.told(2, 10n, hash(3)), true, 'another hash, told after 10 was verified')
  w.mark(1, 10n)
  t.equal(w.lyingAt(1), 10n)
  t.equal(w.lyingAt(0), undefined)
  t.same(w.verified(10n, hash(1)), [2], 'a node already lying is not named again')
})

t.test(`only the last ${KEPT_HEIGHTS} heights are kept`, async (t) => {
  const w = new Witnesses(1)
  for (let h = 1n; h <= BigInt(KEPT_HEIGHTS) + 1n; h++) w.verified(h, hash(1))
  t.equal(w.told(0, 1n, hash(2)), false, 'the oldest height is forgotten')
  t.equal(w.told(0, 2n, hash(2)), true, 'the next one is kept')
  for (let h = 100n; h > 100n - BigInt(KEPT_HEIGHTS) - 1n; h--) w.told(0, h, hash(5))
  t.same(w.verified(100n - BigInt(KEPT_HEIGHTS), hash(1)), [], 'told heights are bounded the same way')
})
