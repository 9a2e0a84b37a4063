import { createHash } from 'node:crypto'
import t from 'tap'
import { merkleRoot, splitPoint } from '../../src/light/merkle.js'

const sha = (...parts: Uint8Array[]): Buffer => createHash('sha256').update(Buffer.concat(parts)).digest()
const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex')

t.test('CometBFT\'s own vectors (crypto/merkle/tree_test.go, TestHashFromByteSlices)', async (t) => {
  const b = (...items: number[][]): Uint8Array[] => items.map((i) => Uint8Array.from(i))
  t.equal(hex(merkleRoot([])), 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', 'empty: SHA-256 of nothing')
  t.equal(hex(merkleRoot(b([1, 2, 3]))), '054edec1d0211f624fed0cbca9d4f9400b0e491c43742af2c5b0abebf0c990d8', 'single')
  t.equal(hex(merkleRoot(b([]))), '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d', 'single blank')
  t.equal(hex(merkleRoot(b([1, 2, 3], [4, 5, 6]))), '82e6cfce00453804379b53962939eaa7906b39904be0813fcadd31b100773c4b', 'two')
  t.equal(hex(merkleRoot(b([1, 2], [3, 4], [5, 6], [7, 8], [9, 10]))), 'f326493eceab4f2d9ffbc78c59432a0a005d6ea98392045c74df5d14a113be18', 'many')
})

t.test('RFC 6962 §2.1 written out: leaves 0x00, inner nodes 0x01, the left subtree the largest power of two below n', async (t) => {
  // The definition, recursively, with node:crypto: independent of merkle.ts's iteration and hash library.
  const mth = (items: Buffer[]): Buffer => {
    if (items.length === 1) return sha(Buffer.of(0), items[0] as Buffer)
    let k = 1
    while (k * 2 < items.length) k *= 2
    return sha(Buffer.of(1), mth(items.slice(0, k)), mth(items.slice(k)))
  }
  for (let n = 1; n <= 33; n++) {
    const items = Array.from({ length: n }, (_, i) => Buffer.from(`item ${i}`))
    t.equal(hex(merkleRoot(items)), hex(mth(items)), `${n} items`)
  }
  t.same([2, 3, 4, 5, 8, 9, 100].map(splitPoint), [1, 2, 2, 4, 4, 8, 64])
})

t.test('a leaf is told from an inner node: two leaves are not one leaf of their concatenated hashes', async (t) => {
  const a = Buffer.from('a')
  const b = Buffer.from('b')
  const inner = Buffer.concat([sha(Buffer.of(0), a), sha(Buffer.of(0), b)])
  t.not(hex(merkleRoot([a, b])), hex(merkleRoot([inner])))
  t.not(hex(merkleRoot([a, b])), hex(merkleRoot([b, a])), 'order matters')
})
