import t from 'tap'
import { chainPath, withQuery } from '../../src/chain/paths.js'
import { startChain } from '../fixtures/chain.js'

t.test('query values are encoded; undefined ones are left out', async (t) => {
  const { chain: client, sim } = await startChain(t)
  await client.get('/productscience/inference/inference/participants_with_balances', { 'pagination.key': 'a+b/c=', skip: undefined })
  t.same(sim.requests, ['/productscience/inference/inference/participants_with_balances?pagination.key=a%2Bb%2Fc%3D'])
})

t.test('chainPath percent-encodes every value as one path segment', async (t) => {
  t.equal(chainPath`/a/${'gonka1xyz'}/b/${42}/${7n}`, '/a/gonka1xyz/b/42/7')
  t.equal(chainPath`/a/${'../../x'}`, '/a/%2E%2E%2F%2E%2E%2Fx')
  t.equal(chainPath`/a/${'x?y#z@w'}`, '/a/x%3Fy%23z%40w')
  t.equal(chainPath`/a/${'.'}`, '/a/%2E')
})

t.test('withQuery appends the defined values only, and nothing when none is', async (t) => {
  t.equal(withQuery('/a', {}), '/a')
  t.equal(withQuery('/a', { x: undefined }), '/a')
  t.equal(withQuery('/a', { x: '1', y: undefined, z: 'a b' }), '/a?x=1&z=a+b')
})
