import t from 'tap'
import { chainOutcome, NO_OBSERVER } from '../../src/chain/types.js'
import {
  ChainAnswerTooLargeError,
  ChainBadAnswerError,
  ChainBusyError,
  ChainHeightUnavailableError,
  ChainStatusError,
  ChainTimeoutError,
  ChainUnavailableError
} from '../../src/errors.js'

t.test('each chain error has its outcome label; anything else is unavailable', async (t) => {
  t.equal(chainOutcome(new ChainStatusError(5, 'not found')), 'gateway_error')
  t.equal(chainOutcome(new ChainHeightUnavailableError('pruned')), 'height_unavailable')
  t.equal(chainOutcome(new ChainTimeoutError(100)), 'timeout')
  t.equal(chainOutcome(new ChainAnswerTooLargeError(10, 'big')), 'too_large')
  t.equal(chainOutcome(new ChainBadAnswerError('not JSON')), 'bad_answer')
  t.equal(chainOutcome(new ChainUnavailableError('refused')), 'unavailable')
  t.equal(chainOutcome(new ChainBusyError()), 'unavailable', 'the limiter never reaches a node: no label of its own')
  t.equal(chainOutcome(new Error('socket hang up')), 'unavailable')
})

t.test('the default observer takes exchanges and has no hedge hooks', async (t) => {
  t.equal(NO_OBSERVER.exchange(1, 'ok', 0.01), undefined)
  t.equal(NO_OBSERVER.hedged, undefined)
  t.equal(NO_OBSERVER.hedgeSkipped, undefined)
})
