import { createHash } from 'node:crypto'
import { decodeBase64 } from '../wire/go-base64.js'
import { ADDRESS_SIZE } from './types.js'

// CometBFT's address of an ed25519 consensus key: the first 20 bytes of its SHA-256. Written
// as upper-case hex, as the Go service's ValidatorKeyToHexAddress (and dapi's
// pubKeyToAddress3 before it) wrote it.

/** SHA256(key)[:20]. */
export function consensusAddressBytes (key: Uint8Array): Buffer {
  return createHash('sha256').update(key).digest().subarray(0, ADDRESS_SIZE)
}

/** HEX-UPPER(SHA256(key)[:20]). */
export function consensusAddress (key: Uint8Array): string {
  return consensusAddressBytes(key).toString('hex').toUpperCase()
}

/** The address of a base64 validator key, or "" when the key is missing or not base64. */
export function validatorKeyAddress (validatorKey: string): string {
  const key = decodeBase64(validatorKey)
  return key === undefined || key.length === 0 ? '' : consensusAddress(key)
}
