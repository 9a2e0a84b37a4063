// What benchmark 21 proves with in process, as the wired route will (src/proven/): a chain
// client of one node of the signed simulator, the app hash of state V taken from header V + 1
// once it is verified adjacently from header V with src/light (as the cursor verifies it),
// and proveAnswer over `/v1/epochs/latest`'s keys at V through that client's read path.
import { ChainClient } from '../../src/chain/client.js'
import { followerOptions, type LightBlock } from '../../src/light/light-block.js'
import { LightReader } from '../../src/light/light-reader.js'
import { timestampOfMs } from '../../src/light/cursor.js'
import { verifyAdjacent } from '../../src/light/verifier.js'
import type { VerifiedAppHashes } from '../../src/proven/app-hashes.js'
import { proveAnswer, type AnswerProof } from '../../src/proven/prove-answer.js'
import { proveValue } from '../../src/proven/prove-value.js'
import { provenRoute, type ProvenRoute } from '../../src/proven/proven-routes.js'

export const EPOCH_INFO_PATH = '/productscience/inference/inference/epoch_info'
const TIMEOUT_MS = 30_000
const TRUSTING_PERIOD_MS = 14 * 24 * 3600 * 1000

export interface ProvingClient {
  /** The state proven: the node's head − 2, as a REST-only verifying replica's V. */
  readonly V: number
  /** The answer's one chain read, unverified, pinned at V: what a miss reads with verification off. */
  unverifiedRead (): Promise<unknown>
  /** `answer` (the route's, at V) proven: every key read with its proof at V, verified, decoded and compared. */
  prove (answer: Record<string, any>): Promise<AnswerProof>
  close (): Promise<void>
}

/** A proving client of the node at `url`, whose head is `head`. */
export async function provingClient (url: string, head: number): Promise<ProvingClient> {
  const client = new ChainClient({ baseUrl: [url], timeoutMs: TIMEOUT_MS, concurrency: 8 })
  try {
    const V = head - 2
    const hashes = await verifiedHashAfter(client, V)
    const route = provenRoute('/v1/epochs/latest') as ProvenRoute
    const reader = client.fromNode(0)
    return {
      V,
      unverifiedRead: async () => client.at(V).get(EPOCH_INFO_PATH),
      prove: async (answer) => proveAnswer(route, { params: {}, height: V }, answer, async (key) => proveValue(reader, hashes, key, V)),
      close: async () => { await client.close() }
    }
  } catch (err) {
    await client.close()
    throw err
  }
}

/** The app hash of state V: header V + 1's, verified adjacently from header V (set hashes, header hash, 2/3 of the signatures). */
async function verifiedHashAfter (client: ChainClient, V: number): Promise<VerifiedAppHashes> {
  const fetch = new LightReader(async (node, path) => client.probe(path, TIMEOUT_MS, node)).fetcher(0, new Map())
  const below: LightBlock = await fetch(BigInt(V))
  const above: LightBlock = await fetch(BigInt(V + 1))
  const verdict = verifyAdjacent({ header: below.signedHeader.header, nextValidators: below.nextValidators }, above, timestampOfMs(Date.now()), followerOptions(TRUSTING_PERIOD_MS))
  if (!verdict.ok) throw new Error(`header ${V + 1} does not verify: ${JSON.stringify(verdict)}`)
  const appHash = above.signedHeader.header.appHash
  return { appHashAfter: (height) => height === V ? appHash : undefined }
}
