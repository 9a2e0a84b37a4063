import { ics23 } from '@confio/ics23'
import t from 'tap'
import { tendermintOpProblem } from '../../src/verify/tendermint-ops.js'

// cosmos/ics23 go/ops_test.go TestValidateTendermintOps at 7f2c2d09, case for case (Go's nil
// suffix is a missing property here), then the suffix as a decoded proof carries it.

t.test('upstream TestValidateTendermintOps', async (t) => {
  const cases: Array<[string, ics23.IInnerOp, string | undefined]> = [
    ['success: valid prefix when suffix populated', { hash: 1, prefix: Uint8Array.of(1), suffix: Uint8Array.of(1) }, undefined],
    ['success: valid prefix when suffix empty', { hash: 1, prefix: Uint8Array.of(1, 2) }, undefined],
    ['failure: empty prefix and suffix', { hash: 1 }, 'inner op prefix must not be empty'],
    ['failure: invalid prefix when suffix populated', { hash: 1, prefix: Uint8Array.of(0), suffix: Uint8Array.of(1) }, 'expected inner op prefix: [1], got: [0]'],
    ['failure: invalid prefix when suffix empty', { hash: 1, prefix: Uint8Array.of(2, 1) }, 'expected inner op prefix to begin with: [1], got: [2]']
  ]
  for (const [name, op, problem] of cases) t.equal(tendermintOpProblem(op), problem, name)
})

t.test('a decoded op: a suffix the proof carries, even empty, means the left child; none, the right', async (t) => {
  // InnerOp { hash: SHA256, prefix: 01 05 } and the same with an empty suffix field (1a 00).
  const right = ics23.InnerOp.decode(Uint8Array.of(0x08, 0x01, 0x12, 0x02, 0x01, 0x05))
  const emptySuffix = ics23.InnerOp.decode(Uint8Array.of(0x08, 0x01, 0x12, 0x02, 0x01, 0x05, 0x1a, 0x00))
  t.equal(tendermintOpProblem(right), undefined)
  t.equal(tendermintOpProblem(emptySuffix), 'expected inner op prefix: [1], got: [1 5]', 'as gogoproto: a present empty field is not nil')
  t.equal(tendermintOpProblem({ prefix: Uint8Array.of(1), suffix: null }), undefined, 'a null suffix is no suffix')
})
