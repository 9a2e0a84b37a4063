import { parseJson, RawNumber, type Json } from './json.js'

// The routes compared and their parameters, found from live chain state the way the Go
// project's compatibility test finds them (zpoken/gonka common/queryapi/tests/compatibility/
// compatibility_test.go@89ff8bdb, resolveChainParams): from the first server's
// /v1/epochs/latest the BLS epoch (latest index, 1 when 0), a height 25 blocks back, and the
// PoC stage start; from its /v1/participants the first participant's address. Parameters that
// chain state cannot give (a BLS request id, an exemption id and account, a public key) come
// from options, and their routes are skipped without them, as in the Go test.

export interface ChainParams {
  blsEpoch: string
  epoch: string
  height: string
  pocEpoch: string
  address: string
}

export interface ExtraParams {
  requestId?: string | undefined
  exemptionId?: string | undefined
  exemptionAccount?: string | undefined
  pubkey?: string | undefined
}

export interface Route {
  /** Path and query, from the server root. */
  readonly path: string
  /**
   * 'body': the whole answer must be equal (keys sorted). 'keys': only its key paths, for an
   * answer that describes the server itself (/v1/versions: its own version and clock).
   */
  readonly compare: 'body' | 'keys'
}

export type Get = (path: string) => Promise<{ status: number, body: string }>

/** Reads the parameters from the first server; anything it cannot answer falls back as in Go. */
export async function discoverParams (get: Get): Promise<ChainParams> {
  const params: ChainParams = { blsEpoch: '1', epoch: '1', height: '0', pocEpoch: '0', address: '' }
  const epoch = await json(get, '/v1/epochs/latest')
  const index = integer(field(epoch, 'latest_epoch', 'index'))
  if (index !== undefined && index > 0n) {
    params.blsEpoch = String(index)
    params.epoch = String(index)
  }
  const height = integer(field(epoch, 'block_height'))
  if (height !== undefined) params.height = String(height - 25n)
  const pocStart = integer(field(epoch, 'latest_epoch', 'poc_start_block_height'))
  if (pocStart !== undefined) params.pocEpoch = String(pocStart)
  const participants = field(await json(get, '/v1/participants'), 'participants')
  for (const p of Array.isArray(participants) ? participants : []) {
    const id = field(p, 'id')
    if (typeof id === 'string' && id !== '') {
      params.address = id
      break
    }
  }
  return params
}

/** Every public route (docs/routes.md), the edge-only /v1/versions and /v1/light/…, the optional debug route Go's test calls. */
export function routesFor (p: ChainParams, extra: ExtraParams = {}): Route[] {
  const body = (path: string): Route => ({ path, compare: 'body' })
  const e = encodeURIComponent
  const routes: Route[] = [
    body('/v1/status'),
    { path: '/v1/versions', compare: 'keys' },
    body('/v1/models'),
    body('/v1/governance/models'),
    body('/v1/governance/models-legacy'),
    body('/v1/pricing'),
    body('/v1/participants'),
    body(`/v1/participants/${e(p.address)}`),
    // Go's test left /v1/epochs/latest out (its block_height moves); here a mismatch is
    // retried, which covers a chain that moved between the two calls.
    body('/v1/epochs/latest'),
    // Go's test asked for epoch "latest", which both servers refuse with 400; "current" and
    // the latest epoch's number are the participants answers clients use.
    body('/v1/epochs/current/participants'),
    body(`/v1/epochs/${e(p.epoch)}/participants`),
    body(`/v1/poc-batches/${e(p.pocEpoch)}`),
    body('/v1/restrictions/status'),
    body('/v1/restrictions/exemptions'),
    body(`/v1/bls/epoch/${e(p.blsEpoch)}`),
    body(`/v1/bls/epochs/${e(p.blsEpoch)}`),
    body('/v1/bridge/addresses?chain=ethereum'),
    body(`/v1/debug/verify/${e(p.height)}`),
    // Ours alone, as /v1/versions: two edge-api builds must agree on them.
    body(`/v1/light/signed-header/${e(p.height)}`),
    body(`/v1/light/validators/${e(p.height)}`)
  ]
  if (extra.pubkey !== undefined) routes.push(body(`/v1/debug/pubkey-to-addr/${e(extra.pubkey)}`))
  if (extra.requestId !== undefined) routes.push(body(`/v1/bls/signatures/${e(extra.requestId)}`))
  if (extra.exemptionId !== undefined && extra.exemptionAccount !== undefined) {
    routes.push(body(`/v1/restrictions/exemptions/${e(extra.exemptionId)}/usage/${e(extra.exemptionAccount)}`))
  }
  return routes
}

async function json (get: Get, path: string): Promise<Json> {
  try {
    const res = await get(path)
    return res.status === 200 ? parseJson(res.body) : null
  } catch {
    return null
  }
}

function field (value: Json | undefined, ...keys: string[]): Json | undefined {
  let v = value
  for (const key of keys) {
    if (v === null || v === undefined || typeof v !== 'object' || Array.isArray(v) || v instanceof RawNumber) return undefined
    v = v[key]
  }
  return v
}

function integer (value: Json | undefined): bigint | undefined {
  return value instanceof RawNumber && /^-?\d+$/.test(value.text) ? BigInt(value.text) : undefined
}
