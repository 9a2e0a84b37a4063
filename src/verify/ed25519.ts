import { createPublicKey, verify, type KeyObject } from 'node:crypto'
import { ed25519 } from '@noble/curves/ed25519.js'

// Ed25519 signature checks with CometBFT's acceptance rule, at native speed.
//
// CometBFT verifies with curve25519-voi under ZIP-215: non-canonical point encodings are
// accepted and the cofactored equation is used. OpenSSL (node:crypto) is stricter: it
// requires R to be canonically encoded and checks the cofactorless equation, so everything
// it accepts ZIP-215 accepts too, but not the reverse (it differs only on crafted encodings;
// honest signers never produce them). Measured on this machine, 100 verifications take
// ~13 ms with node:crypto (cached keys) and ~280 ms with @noble/curves (`npm run bench`,
// BENCHMARKS.md). So node:crypto decides every signature it accepts, and a signature it
// rejects gets a second opinion from @noble/curves with zip215: the outcome is exactly
// ZIP-215's, and the slow path runs only for a signature that is bad (verification stops at
// the first one) or crafted.

const KEY_SIZE = 32
const SIGNATURE_SIZE = 64
// DER SubjectPublicKeyInfo for an Ed25519 key, up to the 32 key bytes (RFC 8410).
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex')

// Importing a key costs about as much as a verification; validator sets change rarely, so
// the keys of a few thousand validators stay imported. OpenSSL imports any 32 bytes (it
// checks the point only when verifying).
const CACHE_LIMIT = 4096
const imported = new Map<string, KeyObject>()

/** Whether `signature` is `publicKey`'s Ed25519 signature of `message`, under ZIP-215. */
export function verifyEd25519 (publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  if (publicKey.length !== KEY_SIZE || signature.length !== SIGNATURE_SIZE) return false
  if (verify(null, message, nativeKey(publicKey), signature)) return true
  return ed25519.verify(signature, message, publicKey, { zip215: true })
}

function nativeKey (publicKey: Uint8Array): KeyObject {
  const id = Buffer.from(publicKey).toString('base64')
  let key = imported.get(id)
  if (key !== undefined) return key
  key = createPublicKey({ key: Buffer.concat([SPKI_PREFIX, publicKey]), format: 'der', type: 'spki' })
  if (imported.size >= CACHE_LIMIT) imported.delete(imported.keys().next().value as string)
  imported.set(id, key)
  return key
}
