import t from 'tap'
import { startEdgeApiForClients, type EdgeApiForClients } from '../fixtures/clients/edge-api.js'
import { BRIDGE_ADDRESSES } from '../../harness/chain-simulator/data/bridge.js'
import { go, len, unmarshal, type GoValue } from '../fixtures/clients/go-json.js'

// gonka-ai/bridge-geth, the Ethereum observer inside a gonka node, as it reads edge-api
// (deployed as BRIDGE_GETADDRESSES=http://api:9000/v1/bridge/addresses):
// gonka-ai/bridge-geth@06055a1aca16cdaf0e632d5898aaa724c1e1fc19 eth/bridge/bridge.go
// getBridgeContractAddresses: GET {endpoint}?chain={BridgeChain} through sendToEndpoint (a status
// other than 200 is an error), json.NewDecoder(...).Decode into
// {chain_name string, chain_id string, addresses []string}, common.HexToAddress of each, and
// "no addresses found in API response" when there are none.

const Response = go.struct('', { chain_name: go.string, chain_id: go.string, addresses: go.slice(go.string) })

/** common.HexToAddress: hex with an optional 0x, the last 20 bytes, left-padded. */
function hexToAddress (s: string): string {
  const hex = s.startsWith('0x') || s.startsWith('0X') ? s.slice(2) : s
  const even = hex.length % 2 === 1 ? `0${hex}` : hex
  const bytes = Buffer.from(even, 'hex')
  const out = Buffer.alloc(20)
  bytes.subarray(Math.max(0, bytes.length - 20)).copy(out, Math.max(0, 20 - bytes.length))
  return `0x${out.toString('hex')}`
}

async function getBridgeContractAddresses (edge: EdgeApiForClients, chain: string): Promise<string[]> {
  const res = await edge.get(`/v1/bridge/addresses?chain=${chain}`)
  if (res.status !== 200) throw new Error(`API returned non-200 status: ${res.status}`)
  const response = unmarshal(res.text, Response) as Record<string, GoValue>
  const addresses = ((response.addresses as string[] | null) ?? []).map(hexToAddress)
  if (len(response.addresses) === 0) throw new Error('no addresses found in API response')
  return addresses
}

t.test('the bridge contract addresses decode as []string and convert to Ethereum addresses unchanged', async (t) => {
  const edge = await startEdgeApiForClients(t)
  const registered = (BRIDGE_ADDRESSES.ethereum ?? []).map((a) => a.address)
  t.equal(registered.length, 2)
  t.same(await getBridgeContractAddresses(edge, 'ethereum'), registered.map((a) => a.toLowerCase()))
})

t.test('a chain without bridge contracts: an answer bridge-geth decodes, then reports as none found', async (t) => {
  const edge = await startEdgeApiForClients(t)
  await t.rejects(getBridgeContractAddresses(edge, 'polygon'), /no addresses found in API response/)
  await t.rejects(getBridgeContractAddresses(edge, 'not%20a%20chain'), /non-200 status: 400/)
})

t.test('the decode this test relies on fails where bridge-geth fails', async (t) => {
  t.throws(() => unmarshal('{"addresses":[{"address":"0xabc"}]}', Response), /cannot unmarshal object into Go struct field \.addresses of type string/,
    'the gateway\'s address objects, passed through, would fail the decode')
  t.equal(hexToAddress('0xabc'), `0x${'0'.repeat(37)}abc`)
})
