import { ics23 } from '@confio/ics23'
import t from 'tap'
import { iavlOpProblem, readVarint } from '../../src/verify/iavl-ops.js'

// cosmos/ics23 go/ops_test.go TestValidateIavlOps at 7f2c2d09, case for case (an inner op at
// layer 1 whose prefix is generateInnerOpPrefix(): height 5, size 10, version 20, a length
// byte), then what it does not cover: the leaf's height and size, a child from the right,
// the varint reader's edges.

const zigzag = (...values: number[]): number[] => values.map((v) => (v >= 0 ? 2 * v : -2 * v - 1))
const innerPrefix = Uint8Array.of(...zigzag(5, 10, 20), 0x20)
const inner = (prefix: Uint8Array | number[], hash = ics23.HashOp.SHA256): { prefix: Uint8Array, hash: ics23.HashOp } => ({ prefix: Uint8Array.from(prefix), hash })

t.test('upstream TestValidateIavlOps', async (t) => {
  const cases: Array<[string, ReturnType<typeof inner>, number, string | undefined]> = [
    ['success', inner(innerPrefix), 1, undefined],
    ['failure: reading varint', inner([]), 1, 'failed to read IAVL height varint: EOF'],
    ['failure: invalid height value', inner([1]), 1, 'IAVL height (-1) must be non-negative and greater than or equal to the layer number (1)'],
    ['failure: invalid size varint', inner(zigzag(5)), 1, 'failed to read IAVL size varint: EOF'],
    ['failure: invalid size value', inner(zigzag(5, -1)), 1, 'IAVL size must be non-negative'],
    ['failure: invalid version varint', inner(zigzag(5, 10)), 1, 'failed to read IAVL version varint: EOF'],
    ['failure: invalid version value', inner(zigzag(5, 10, -1)), 1, 'IAVL version must be non-negative'],
    ['failure: invalid remaining length with layer number is 0', inner(innerPrefix), 0, 'expected remaining prefix length to be 0, got: 1'],
    ['failure: invalid remaining length with non-zero layer number', inner([...innerPrefix, 1]), 1, 'remainder of prefix must be of length 1 or 34, got: 2'],
    ['failure: invalid hash', inner(innerPrefix, ics23.HashOp.NO_HASH), 1, 'IAVL hash op must be SHA256']
  ]
  for (const [name, op, layer, problem] of cases) t.equal(iavlOpProblem(op, layer), problem, name)
})

t.test('a leaf: height 0, size 1, a version, nothing after', async (t) => {
  t.equal(iavlOpProblem({ prefix: Uint8Array.of(0x00, 0x02, 0x8a, 0x01) }, 0), undefined, 'upstream\'s leaf prefix AAKKAQ== (version 69)')
  t.equal(iavlOpProblem({ prefix: Uint8Array.of(...zigzag(1, 1, 7)) }, 0), 'expected leaf node height to be 0, got: 1')
  t.equal(iavlOpProblem({ prefix: Uint8Array.of(...zigzag(0, 2, 7)) }, 0), 'expected leaf node size to be 1, got: 2')
  t.equal(iavlOpProblem({ prefix: Uint8Array.of(...zigzag(0, 1, 7), 3, 0x75, 0x2f) }, 0), 'expected remaining prefix length to be 0, got: 3',
    'bytes after the version: the boundary of the key moved into the prefix')
  t.equal(iavlOpProblem({}, 0), 'failed to read IAVL height varint: EOF', 'no prefix at all')
})

t.test('an inner node: height at least its layer; the left child (1 byte left) or the right (34)', async (t) => {
  t.equal(iavlOpProblem(inner([...zigzag(3, 5, 9), 0x20, ...new Uint8Array(32), 0x20]), 3), undefined, 'from the right: 34 bytes remain')
  t.equal(iavlOpProblem(inner([...zigzag(2, 5, 9), 0x20]), 3), 'IAVL height (2) must be non-negative and greater than or equal to the layer number (3)')
  t.equal(iavlOpProblem(inner(zigzag(3, 5, 9)), 1), 'remainder of prefix must be of length 1 or 34, got: 0')
  t.equal(iavlOpProblem(inner([...zigzag(3, 5, 9), 0x20, ...new Uint8Array(32)]), 1), 'remainder of prefix must be of length 1 or 34, got: 33')
  t.equal(iavlOpProblem({ prefix: innerPrefix }, 1), 'IAVL hash op must be SHA256', 'no hash op')
})

t.test('readVarint is Go\'s binary.ReadVarint: zigzag int64, EOF, unexpected EOF, overflow', async (t) => {
  t.same(readVarint(Uint8Array.of(0x8a, 0x01), 0), { value: 69n, next: 2 })
  t.same(readVarint(Uint8Array.of(9, 0x03), 1), { value: -2n, next: 2 })
  t.same(readVarint(Uint8Array.of(...new Array<number>(9).fill(0xff), 0x01), 0), { value: -(2n ** 63n), next: 10 }, 'the most negative int64')
  t.same(readVarint(Uint8Array.of(0xfe, ...new Array<number>(8).fill(0xff), 0x01), 0), { value: 2n ** 63n - 1n, next: 10 }, 'the largest int64')
  t.same(readVarint(Uint8Array.of(), 0), { error: 'EOF' })
  t.same(readVarint(Uint8Array.of(0x80), 0), { error: 'unexpected EOF' })
  t.same(readVarint(Uint8Array.of(...new Array<number>(9).fill(0xff), 0x02), 0), { error: 'binary: varint overflows a 64-bit integer' }, 'a 10th byte above 1')
  t.same(readVarint(Uint8Array.of(...new Array<number>(11).fill(0xff)), 0), { error: 'binary: varint overflows a 64-bit integer' }, 'no end within 10 bytes')
  t.equal(iavlOpProblem(inner([...new Array<number>(9).fill(0xff), 0x01, 2, 2, 0x20]), 1),
    'IAVL height (-9223372036854775808) must be non-negative and greater than or equal to the layer number (1)')
  t.equal(iavlOpProblem(inner([2, 0x80]), 1), 'failed to read IAVL size varint: unexpected EOF')
})
