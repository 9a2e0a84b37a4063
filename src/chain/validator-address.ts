import { createHash } from 'node:crypto'

// CometBFT's address of an ed25519 consensus key: the first 20 bytes of its SHA-256,
// written as upper-case hex, as the Go service's ValidatorKeyToHexAddress (and dapi's
// pubKeyToAddress3 before it) wrote it.

// Go's base64.StdEncoding: the standard alphabet with padding. Buffer.from(…, 'base64')
// alone would accept anything, so a key Go rejects would get an address here.
const STD_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/

/** Bytes of a standard, padded base64 string; undefined when Go's StdEncoding would reject it. */
export function decodeBase64 (text: string): Uint8Array | undefined {
  return STD_BASE64.test(text) ? Buffer.from(text, 'base64') : undefined
}

/** HEX-UPPER(SHA256(key)[:20]). */
export function consensusAddress (key: Uint8Array): string {
  return createHash('sha256').update(key).digest().subarray(0, 20).toString('hex').toUpperCase()
}

/** The address of a base64 validator key, or "" when the key is missing or not base64. */
export function validatorKeyAddress (validatorKey: string): string {
  const key = decodeBase64(validatorKey)
  return key === undefined || key.length === 0 ? '' : consensusAddress(key)
}
