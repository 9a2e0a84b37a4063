import t from 'tap'
import { ServedFloor } from '../../src/chain/served-floor.js'

// The served floor (src/chain/served-floor.ts): it only rises, unless the heads that raised it
// were false.

t.test('rises, never falls by a raise', async (t) => {
  const floor = new ServedFloor()
  t.equal(floor.height, 0)
  floor.raise(10)
  floor.raise(8)
  t.equal(floor.height, 10)
})

t.test('drops to the best head only when more than the window above it', async (t) => {
  const floor = new ServedFloor()
  floor.raise(100)
  t.notOk(floor.dropAbove(95, 5), '5 above: a lagging node, kept')
  t.equal(floor.height, 100)
  t.ok(floor.dropAbove(94, 5), '6 above: dropped')
  t.equal(floor.height, 94)
})
