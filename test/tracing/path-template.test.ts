import t from 'tap'
import { chainPath } from '../../src/chain/paths.js'
import { pathTemplate } from '../../src/tracing/path-template.js'

t.test('the values a route puts in a chain path become {}; the gateway\'s words stay; no query', async (t) => {
  const cases: Array<[string, string]> = [
    ['/cosmos/base/tendermint/v1beta1/node_info', '/cosmos/base/tendermint/v1beta1/node_info'],
    [chainPath`/cosmos/base/tendermint/v1beta1/blocks/${123n}`, '/cosmos/base/tendermint/v1beta1/blocks/{}'],
    [chainPath`/productscience/inference/inference/inference_participant/${'gonka1qyqszqgpqyqszqgpqyqszqgpqyqszqgpxyz5z'}`, '/productscience/inference/inference/inference_participant/{}'],
    [chainPath`/productscience/inference/inference/models/${'Qwen/Qwen2.5-7B'}` + '?pagination.limit=100', '/productscience/inference/inference/models/{}'],
    [chainPath`/productscience/inference/bls/signing_status/${'a'.repeat(64)}`, '/productscience/inference/bls/signing_status/{}'],
    ['/x/v2/epoch_1', '/x/v2/epoch_1']
  ]
  for (const [path, template] of cases) t.equal(pathTemplate(path), template, path)
})
