// Go's base64.StdEncoding: the standard alphabet with padding. Buffer.from(…, 'base64')
// alone would accept anything, so a key Go rejects would be read here.
const STD_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/

/** Bytes of a standard, padded base64 string; undefined when Go's StdEncoding would reject it. */
export function decodeBase64 (text: string): Uint8Array | undefined {
  return STD_BASE64.test(text) ? Buffer.from(text, 'base64') : undefined
}
