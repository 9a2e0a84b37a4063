import type { Query } from './types.js'

// The gateway paths the chain client itself asks, and how any gateway path is built.

/** The node's identity and versions: what readiness probes and /v1/versions reports. */
export const NODE_INFO_PATH = '/cosmos/base/tendermint/v1beta1/node_info'
/** The node's latest block: its header's height is the node's head (the head poll). */
export const LATEST_BLOCK_PATH = '/cosmos/base/tendermint/v1beta1/blocks/latest'

/**
 * Builds a gateway path, percent-encoding every interpolated value as one path segment,
 * so nothing a client sends can change which path is queried (no "..", "/", "?" or "#").
 */
export function chainPath (strings: TemplateStringsArray, ...values: Array<string | number | bigint>): string {
  let path = strings[0] as string
  values.forEach((value, i) => {
    path += encodeSegment(String(value)) + (strings[i + 1] as string)
  })
  return path
}

function encodeSegment (value: string): string {
  // encodeURIComponent leaves "." alone; "." and ".." segments would still walk the path.
  return encodeURIComponent(value).replace(/\./g, '%2E')
}

/** `path` with `query`'s defined values as its query string. */
export function withQuery (path: string, query: Query): string {
  const params = new URLSearchParams()
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined) params.append(key, value)
  }
  const text = params.toString()
  return text === '' ? path : `${path}?${text}`
}
