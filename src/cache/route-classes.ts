// Every /v1 route, by how its answer depends on the chain's height: the one list that decides
// pinning, the answer cache and the HTTP caching headers (docs/heights-and-cache.md §4).
// A /v1 route missing here refuses to boot (src/cache/http-cache.ts).

/**
 * - `latest`: the chain's state at its latest height. Every chain call of one answer is pinned
 *   to one height, served at this replica's head, never below one it served; cached per
 *   (route, params, height); `Cache-Control: no-cache`.
 * - `fixed`: fixed by a height in the path, the same at every later head; cached per
 *   (route, params); `public, max-age=1y, immutable`.
 * - `pure`: a function of the request alone, no chain read; `immutable` too.
 * - `local`: this replica's own state, no chain read (its status: how far its verified height
 *   is behind the head moves with every block): no answer cache, `no-cache`, no chain reader.
 * - `uncached`: per request or per node (timestamps, node versions) or a POST: no answer
 *   cache; a GET 200 still carries an ETag of its body.
 */
export type RouteClass = 'latest' | 'fixed' | 'pure' | 'local' | 'uncached'

/**
 * How a path parameter that its route reads as one value can be spelled several ways:
 * `integer`, a number with a sign or leading zeros (`5`, `+5`, `05`); `hex`, bytes in either case.
 * Their answers share one cache key (src/cache/answer-key.ts).
 */
export type ParamSpelling = 'integer' | 'hex'

export interface RouteClassEntry {
  readonly class: RouteClass
  readonly why: string
  /** The parameters with several spellings of one value: none when absent. */
  readonly params?: Readonly<Record<string, ParamSpelling>>
}

// PoC data is pruned an epoch later and BLS requests change state until terminal, so a
// read at the latest height of an epoch that has passed is still latest-state: only a read
// pinned by its path to a height is immutable.
export const ROUTE_CLASSES: Readonly<Record<string, RouteClassEntry>> = {
  'GET /v1/status': { class: 'local', why: 'no chain read, but with EDGE_API_VERIFICATION it says how far behind the head the verified height is, which moves with every block' },
  'GET /v1/versions': { class: 'uncached', why: 'per node (node_info differs between nodes and upgrades) and carries the request time' },
  'GET /v1/participants': { class: 'latest', why: 'balances and weights change every block; body block_height is the height' },
  'GET /v1/participants/:address': { class: 'latest', why: 'the balance changes with any transfer' },
  'GET /v1/epochs/:epoch': { class: 'latest', why: 'epoch_info: block_height and the phase move every block' },
  'GET /v1/epochs/:epoch/participants': { class: 'latest', params: { epoch: 'integer' }, why: 'the entry is read at the latest height (it can be pruned or, for "current", change epoch); its proof, block and validator set are fixed by its created height' },
  'GET /v1/models': { class: 'latest', why: 'the epoch group changes at each epoch; "created" is when the answer was built' },
  'GET /v1/pricing': { class: 'latest', why: 'the unit of compute price and sub-groups change at each epoch' },
  'GET /v1/governance/models': { class: 'latest', why: 'governance changes models_all on a proposal' },
  'GET /v1/governance/models-legacy': { class: 'latest', why: 'as /v1/governance/models' },
  'GET /v1/poc-batches/:epoch': { class: 'latest', params: { epoch: 'integer' }, why: 'PoC batches are pruned an epoch later (PocDataPruningEpochThreshold 1): 200 turns into 404' },
  'GET /v1/restrictions/status': { class: 'latest', why: 'current_block_height and remaining_blocks move every block' },
  'GET /v1/restrictions/exemptions': { class: 'latest', why: 'governance adds and expires exemptions' },
  'GET /v1/restrictions/exemptions/:id/usage/:account': { class: 'latest', why: 'usage grows with each exempted transfer' },
  'GET /v1/bls/epoch/:id': { class: 'latest', params: { id: 'integer' }, why: 'DKG data moves through its phases (DEALING → … → SIGNED) block by block' },
  'GET /v1/bls/epochs/:id': { class: 'latest', params: { id: 'integer' }, why: 'as /v1/bls/epoch/:id' },
  'GET /v1/bls/signatures/:request_id': { class: 'latest', params: { request_id: 'hex' }, why: 'a signing request moves from PENDING to a terminal state; absent until created' },
  'GET /v1/bridge/addresses': { class: 'latest', why: 'governance changes bridge contracts' },
  'GET /v1/light/signed-header/:height': { class: 'fixed', params: { height: 'integer' }, why: 'a header and the commit that signs it never change (CometBFT commits are final)' },
  'GET /v1/light/validators/:height': { class: 'fixed', params: { height: 'integer' }, why: 'the validator set of a height never changes' },
  'GET /v1/debug/verify/:height': { class: 'fixed', params: { height: 'integer' }, why: 'the block at the height and the validator set that signed it never change (CometBFT commits are final)' },
  'GET /v1/debug/pubkey-to-addr/:pubkey': { class: 'pure', why: 'a function of the key alone' },
  'POST /v1/verify-proof': { class: 'uncached', why: 'a POST: a function of its body, never cached' },
  'POST /v1/verify-block': { class: 'uncached', why: 'a POST; reads the validator set at the body\'s height' }
}

/** The class of a route ("GET /v1/participants"); undefined when the list lacks it. */
export function routeClass (method: string, url: string): RouteClass | undefined {
  return ROUTE_CLASSES[`${method} ${url}`]?.class
}

/** The parameters of a GET route with several spellings of one value. */
export function paramSpellings (url: string): Readonly<Record<string, ParamSpelling>> {
  return ROUTE_CLASSES[`GET ${url}`]?.params ?? {}
}

// Chain reads fixed by a height, whatever the head: CometBFT commits are final (no reorgs),
// and a store version, once committed, never changes. A pruned node refuses them later, but
// what the chain said at that height stays true.
const FIXED_PATHS = [
  /^\/cosmos\/base\/tendermint\/v1beta1\/blocks\/\d+$/,
  /^\/cosmos\/base\/tendermint\/v1beta1\/validatorsets\/\d+$/
]
const ABCI_QUERY_PATH = '/cosmos/base/tendermint/v1beta1/abci_query'

/** Whether a chain read's answer is decided by a height in its path or its query (src/cache/fixed-reads.ts keeps those). */
export function isFixedRead (path: string, query: Readonly<Record<string, string>> | undefined): boolean {
  if (path === ABCI_QUERY_PATH) return query?.height !== undefined
  return FIXED_PATHS.some((pattern) => pattern.test(path))
}
