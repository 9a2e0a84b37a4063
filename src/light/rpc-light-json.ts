import { decodeBlockJson } from '../cometbft/block-json.js'
import type { Commit, SignedHeader } from '../cometbft/types.js'
import { bytes, count, decimal, headerOf, jsonObject, LightJsonError, type ValidatorPage } from './gateway-json.js'

// What the verified-height cursor reads from a node's CometBFT RPC (EDGE_API_CHAIN_RPC_URL),
// as CometBFT's types: the `result` of /commit?height=H (rpc/core/types ResultCommit: the
// signed header at H, its commit the canonical one or, at the node's head, the one it has
// seen, which no block carries yet) and of /validators?height=H&page=N (ResultValidators).
// CometBFT writes its own JSON (cmtjson): 64-bit integers as decimal strings, hashes and
// addresses as hex, signatures and keys as base64, a key as {type, value} by its amino name.
// As gateway-json.ts: nothing here is trusted, an answer that cannot be read is refused
// naming the field.

const ED25519 = 'tendermint/PubKeyEd25519'

/** /commit's result: the signed header (whether its commit is canonical does not matter to a light client: it is verified either way). */
export function rpcSignedHeader (result: unknown): SignedHeader {
  const signed = jsonObject(jsonObject(result, 'result').signed_header, 'result.signed_header')
  const header = headerOf(signed.header, 'result.signed_header.header', 'cometbft')
  const commit = jsonObject(signed.commit, 'result.signed_header.commit')
  try {
    // block-json.ts reads a commit in CometBFT's JSON as a block's last_commit; its messages name that field.
    return { header, commit: decodeBlockJson({ header: { chain_id: header.chainId, height: String(header.height) }, last_commit: commit }).lastCommit as Commit }
  } catch (err) {
    throw new LightJsonError(`result.signed_header.commit: ${(err as Error).message}`)
  }
}

/** One page of /validators: its validators (ed25519 keys, as gonka's) and the set's total count. */
export function rpcValidatorPage (result: unknown): ValidatorPage {
  const page = jsonObject(result, 'result')
  if (!Array.isArray(page.validators)) throw new LightJsonError('result.validators: must be an array')
  const validators = page.validators.map((v: unknown, i) => {
    const path = `result.validators[${i}]`
    const validator = jsonObject(v, path)
    const key = jsonObject(validator.pub_key, `${path}.pub_key`)
    if (key.type !== ED25519) throw new LightJsonError(`${path}.pub_key.type: must be ${ED25519}`)
    return { pubKey: bytes(key.value, `${path}.pub_key.value`, 'protojson'), votingPower: decimal(validator.voting_power, `${path}.voting_power`) }
  })
  return { validators, total: count(page.total, 'result.total') }
}
