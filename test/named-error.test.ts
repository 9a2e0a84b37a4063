import t from 'tap'
import { NamedError } from '../src/named-error.js'

t.test('an error class is named after itself, subclasses included', async (t) => {
  class ProofError extends NamedError {}
  class DeeperError extends ProofError {}
  const error = new ProofError('does not verify')
  t.ok(error instanceof Error)
  t.match(error, { name: 'ProofError', message: 'does not verify' })
  t.equal(String(error), 'ProofError: does not verify')
  t.equal(new DeeperError('x').name, 'DeeperError')
})
