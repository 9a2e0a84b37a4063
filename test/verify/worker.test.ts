import t from 'tap'
import { decodeOutcome } from '../../src/verify/outcome.js'
import * as tasks from '../../src/verify/tasks.js'
import * as worker from '../../src/verify/worker.js'

// The thread's module, loaded here in the test's own thread: each task's outcome, as bytes.

t.test('each export is its task, the outcome serialised', async (t) => {
  const body = Buffer.from('{"block":{"header":{}},"validators":[]}')
  t.same(decodeOutcome(worker.parseBlockBody(body)), tasks.parseBlockBody(body))
  const input = { block: { header: { chain_id: 'c', height: '1' } }, validators: [] }
  t.same(decodeOutcome(worker.prepareBlock(input)), { ok: false, error: 'invalid Block: last_commit: nil Commit' })
  const commit = { height: 1n, round: 0, blockId: { hash: new Uint8Array(), partSetHeader: { total: 0, hash: new Uint8Array() } }, signatures: [] }
  t.same(decodeOutcome(worker.checkCommit({ chainId: 'c', commit, height: 2n, validators: [] })), { ok: false, error: 'invalid commit -- insufficient voting power: got 0, needed more than 0' })
  t.same(decodeOutcome(worker.verifyProof({ ops: [], root: Uint8Array.of(1), keyPath: '/x', value: Uint8Array.of(1) })), { ok: false, error: 'keypath not consumed all' })
})
