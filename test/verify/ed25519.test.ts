import { createHash, verify as nodeVerify, createPublicKey } from 'node:crypto'
import { ed25519 } from '@noble/curves/ed25519.js'
import t from 'tap'
import { verifyEd25519 } from '../../src/verify/ed25519.js'

const seed = createHash('sha256').update('ed25519-test').digest()
const publicKey = ed25519.getPublicKey(seed)
const message = Buffer.from('a canonical vote')
const signature = ed25519.sign(message, seed)

t.test('a valid signature verifies; any change to key, message or signature does not', async (t) => {
  t.ok(verifyEd25519(publicKey, message, signature))
  t.ok(verifyEd25519(publicKey, message, signature), 'again, from the imported-key cache')
  const flip = (bytes: Uint8Array, i: number): Uint8Array => { const copy = Uint8Array.from(bytes); copy[i] = (copy[i] as number) ^ 1; return copy }
  t.notOk(verifyEd25519(publicKey, flip(message, 3), signature), 'message')
  t.notOk(verifyEd25519(publicKey, message, flip(signature, 10)), 'signature (R)')
  t.notOk(verifyEd25519(publicKey, message, flip(signature, 40)), 'signature (S)')
  t.notOk(verifyEd25519(ed25519.getPublicKey(createHash('sha256').update('other').digest()), message, signature), 'another key')
})

t.test('wrong sizes are refused without any curve work', async (t) => {
  t.notOk(verifyEd25519(publicKey.subarray(1), message, signature))
  t.notOk(verifyEd25519(publicKey, message, signature.subarray(1)))
  t.notOk(verifyEd25519(publicKey, message, new Uint8Array(0)))
})

t.test('ZIP-215, as CometBFT: what OpenSSL rejects gets a second opinion', async (t) => {
  // The identity point with a canonical key and a non-canonical R (y = p + 1, i.e. y = 1
  // again), and S = 0: [8](R + kA - SB) is the identity, so ZIP-215 accepts it for any
  // message; OpenSSL re-encodes R canonically, compares bytes, and rejects.
  const identity = Buffer.alloc(32)
  identity[0] = 1
  const nonCanonicalIdentity = Buffer.alloc(32, 0xff)
  nonCanonicalIdentity[0] = 0xee
  nonCanonicalIdentity[31] = 0x7f
  const crafted = Buffer.concat([nonCanonicalIdentity, Buffer.alloc(32)])
  const spki = createPublicKey({ key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), identity]), format: 'der', type: 'spki' })
  t.notOk(nodeVerify(null, message, spki, crafted), 'node:crypto (OpenSSL) rejects it')
  t.ok(ed25519.verify(crafted, message, identity, { zip215: true }), 'ZIP-215 accepts it')
  t.notOk(ed25519.verify(crafted, message, identity, { zip215: false }), 'strict RFC 8032 does not')
  t.ok(verifyEd25519(identity, message, crafted), 'so the verifier accepts it, as CometBFT would')
})

t.test('the imported-key cache stays bounded', async (t) => {
  // 4097 distinct keys (one more than the cache holds), each with a signature whose S is out
  // of range, which both checks refuse before any point multiplication.
  const bad = Buffer.concat([Buffer.from(signature.subarray(0, 32)), Buffer.alloc(32, 0xff)])
  let accepted = 0
  for (let i = 0; i <= 4096; i++) {
    const key = Buffer.alloc(32)
    key.writeUInt32LE(i)
    if (verifyEd25519(key, message, bad)) accepted++
  }
  t.equal(accepted, 0)
  t.ok(verifyEd25519(publicKey, message, signature), 'a key evicted earlier is imported again')
})
