import type { ProvenRead, StoreKey } from './prove-value.js'
import { INFERENCE_STORE, keyId } from './store-keys.js'
import type { ProvenRoute, ProvenValues, RouteRequest } from './proven-routes.js'

// Every store value a route's answer derives from, proven: the keys the route names
// (proven-routes.ts), proven together, then the keys those values name, until none is new
// (at most three rounds for the routes listed: the epoch, its parent group, its models).

/** All the route's values proven, or the first reason one is not (a lie first: it names the node). */
export type RouteProof =
  | { readonly kind: 'proven', readonly values: ProvenValues }
  | Exclude<ProvenRead, { kind: 'value' } | { kind: 'absent' }>

const PRIORITY = ['forged', 'pruned', 'not-yet']

/** Proves the values of `route`'s answer to `request` with `prove` (proveValue bound to one node, V and the verified app hashes). */
export async function proveRoute (route: ProvenRoute, request: RouteRequest, prove: (key: StoreKey) => Promise<ProvenRead>): Promise<RouteProof> {
  const values = new Map<string, Uint8Array | null>()
  for (;;) {
    const missing = route.keys(request, values).filter((key) => !values.has(keyId(key)))
    if (missing.length === 0) return { kind: 'proven', values }
    const reads = await Promise.all(missing.map(async (key) => prove({ store: INFERENCE_STORE, key })))
    const failed = reads.filter((read) => read.kind !== 'value' && read.kind !== 'absent') as Array<Exclude<RouteProof, { kind: 'proven' }>>
    failed.sort((a, b) => PRIORITY.indexOf(a.kind) - PRIORITY.indexOf(b.kind))
    if (failed[0] !== undefined) return failed[0]
    missing.forEach((key, i) => {
      const read = reads[i] as ProvenRead
      values.set(keyId(key), read.kind === 'value' ? read.value : null)
    })
  }
}
