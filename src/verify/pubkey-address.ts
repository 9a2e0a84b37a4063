import { ripemd160 } from '@noble/hashes/legacy.js'
import { sha256 } from '@noble/hashes/sha2.js'
import { bech32 } from '@scure/base'
import { decodeBase64 } from '../wire/go-base64.js'
import { decodeHexGo } from '../wire/go-hex.js'

// The account address of a public key, as the Go service's PubKeyToAddress wrote it:
// bech32("gonka", RIPEMD-160(SHA-256(key bytes))). The key is read as standard base64 first
// (the chain's format) and as hex second (the legacy format); any bytes are hashed, whatever
// their length, as in Go.

export const ADDRESS_PREFIX = 'gonka'

/** The bech32 address of a base64 or hex key; throws GoHexError (Go's text) when it is neither. */
export function pubkeyToAddress (key: string): string {
  return bech32.encode(ADDRESS_PREFIX, bech32.toWords(ripemd160(sha256(keyBytes(key)))))
}

function keyBytes (key: string): Uint8Array {
  // Go's base64 decoder skips \r and \n wherever they are.
  return decodeBase64(key.replace(/[\r\n]/g, '')) ?? decodeHexGo(key)
}
