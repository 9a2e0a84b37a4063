import type { IncomingHttpHeaders } from 'node:http'

// Heights on the wire (docs/heights-and-cache.md): the request header that pins a query to a
// height, the response header with the height answered, and the gateway's errors of a height
// a node cannot serve.

/** Pins a gateway query to a height (the SDK's GRPCBlockHeightHeader, forwarded by the gateway). */
export const HEIGHT_HEADER = 'x-cosmos-block-height'
/** The height a query was answered at: the SDK's response metadata under grpc-gateway's outgoing prefix. */
export const ANSWERED_HEIGHT_HEADER = 'grpc-metadata-x-cosmos-block-height'

// By message, not gRPC code: the SDK versions disagree on the code (ErrInvalidHeight has none
// in some, so it arrives as Unknown), and a code-based mapping would make them 400/404.
const UNSERVABLE_HEIGHT = [
  'cannot query with height in the future', // baseapp CreateQueryContext, above the head
  'failed to load state at height', // baseapp CreateQueryContext, pruned
  'version does not exist', // iavl, pruned
  'is not available, lowest height is', // CometBFT block store, pruned
  'must be less than or equal to the current blockchain height', // CometBFT RPC, above the head
  'bigger than the chain length', // the SDK's Tendermint service, above the head
  'bigger then the chain length' // the same, as some SDK versions spell it
]

/** Whether a gateway error says the node cannot serve the height asked (the node's failure, not the client's). */
export function isUnservableHeight (message: string): boolean {
  return UNSERVABLE_HEIGHT.some((words) => message.includes(words))
}

/** The height a node says it answered at, if it says (a positive integer header). */
export function answeredHeight (headers: IncomingHttpHeaders): number | undefined {
  const value = headers[ANSWERED_HEIGHT_HEADER]
  if (typeof value !== 'string' || !/^[1-9]\d{0,15}$/.test(value)) return undefined
  return Number(value)
}
