import t from 'tap'
import { proveRoute } from '../../src/proven/prove-route.js'
import type { ProvenRead, StoreKey } from '../../src/proven/prove-value.js'
import { provenRoute, type ProvenRoute } from '../../src/proven/proven-routes.js'
import { effectiveEpochIndexKey, epochGroupDataKey, keyId } from '../../src/proven/store-keys.js'

// The rounds of a route's reads, and which failure wins, with the reads scripted (the real
// reads over sockets: proven-routes.test.ts).

const models = provenRoute('/v1/models') as ProvenRoute
const EPOCH = Buffer.from('000000000000002a', 'hex')

t.test('keys are asked in rounds, each naming what the last proved, until none is new', async (t) => {
  const asked: string[][] = []
  let round: string[] = []
  const prove = async ({ key }: StoreKey): Promise<ProvenRead> => {
    round.push(keyId(key))
    queueMicrotask(() => { if (round.length > 0) { asked.push(round); round = [] } })
    return keyId(key) === keyId(effectiveEpochIndexKey()) ? { kind: 'value', value: EPOCH } : { kind: 'absent' }
  }
  const proof = await proveRoute(models, { params: {}, height: 10 }, prove)
  t.same(asked, [[keyId(effectiveEpochIndexKey())], [keyId(epochGroupDataKey(42n, ''))]], 'the epoch, then its parent group (absent: no models to ask)')
  t.same(proof, { kind: 'proven', values: new Map([[keyId(effectiveEpochIndexKey()), EPOCH], [keyId(epochGroupDataKey(42n, '')), null]]) })
})

t.test('a failure ends the read; a lie is reported before a pruned or not-yet read', async (t) => {
  const two = { ...models, keys: () => [Uint8Array.of(1), Uint8Array.of(2), Uint8Array.of(3)] }
  const reads: ProvenRead[] = [{ kind: 'not-yet' }, { kind: 'pruned', reason: 'gone' }, { kind: 'forged', reason: 'lie' }]
  t.same(await proveRoute(two, { params: {}, height: 1 }, async ({ key }) => reads[(key[0] as number) - 1] as ProvenRead), { kind: 'forged', reason: 'lie' })
  reads[2] = { kind: 'value', value: Uint8Array.of(1) }
  t.same(await proveRoute(two, { params: {}, height: 1 }, async ({ key }) => reads[(key[0] as number) - 1] as ProvenRead), { kind: 'pruned', reason: 'gone' })
})
