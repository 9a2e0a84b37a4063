// A chain path's low-cardinality template, for the client span's name and url.template: the
// values a route interpolated (chainPath in src/chain/client.ts) become {}, the gateway's own
// words stay. A value is told apart by its shape: it was percent-encoded, or it is longer than
// any gateway word (a hash, an address), or it has a digit and is not a short word such as
// v1beta1 (a height, an epoch). The query string is dropped.

const SHORT_WORD = /^[a-z][a-z0-9_]*$/

/** "/cosmos/base/tendermint/v1beta1/blocks/123?x=1" → "/cosmos/base/tendermint/v1beta1/blocks/{}". */
export function pathTemplate (path: string): string {
  const end = path.indexOf('?')
  const bare = end < 0 ? path : path.slice(0, end)
  return bare.split('/').map((segment) => isValue(segment) ? '{}' : segment).join('/')
}

function isValue (segment: string): boolean {
  if (segment === '') return false
  if (segment.includes('%') || segment.length > 24) return true
  if (!/\d/.test(segment)) return false
  return segment.length > 12 || !SHORT_WORD.test(segment)
}
