import type { Counter, Registry } from 'prom-client'
import { HINT_RESULTS, type HintResult } from '../shared/head-hints.js'
import { SHARED_LOOKUPS, type SharedLookup } from '../shared/shared-answers.js'
import { OPERATION_RESULTS, OPERATIONS, type Operation, type OperationResult, type StoreObserver, type StoreState } from '../shared/store.js'
import type { SubscriptionState } from '../shared/subscription.js'
import { counterOf, gaugeReading } from './instruments.js'

// The metrics of the shared tier (docs/shared-tier.md, docs/metrics.md): exported whether it is
// configured or not, at 0 without it. Part of a service's Metrics (registry.ts), in its registry.

export class SharedTierMetrics implements StoreObserver {
  #storeUp = 0
  #subscriptionUp = 0
  readonly #operations: Counter<'operation' | 'result'>
  readonly #heads: Counter<'result'>
  readonly #answers: Counter<'result'>

  constructor (registry: Registry) {
    gaugeReading(registry, 'edge_api_shared_store_up', '1 while the shared tier\'s store answers (EDGE_API_REDIS_URL), 0 while it is connecting, down or unresponsive, or not configured',
      () => this.#storeUp)
    gaugeReading(registry, 'edge_api_shared_subscription_up', '1 while the shared tier\'s subscribing connection holds its channels and answers its pings (heads and built answers heard), 0 otherwise or not configured',
      () => this.#subscriptionUp)
    this.#operations = counterOf(registry, 'edge_api_shared_operations_total',
      'Commands to the shared tier\'s store by operation and result: ok, timeout (past its few-ms deadline), error, skipped (not sent: the store is down or unresponsive)',
      ['operation', 'result'], OPERATIONS.flatMap((operation) => OPERATION_RESULTS.map((result) => ({ operation, result }))))
    this.#heads = counterOf(registry, 'edge_api_shared_heads_total',
      'Heads shared across the pool, by result: published (this replica\'s), looked (another\'s head ahead: its nodes asked now), confirmed / unconfirmed (by that look), behind, implausible (too far ahead: ignored), ignored',
      ['result'], HINT_RESULTS.map((result) => ({ result })))
    this.#answers = counterOf(registry, 'edge_api_shared_answers_total',
      'Answer-cache misses looked up in the shared tier, by result: hit, waited (for the replica building it), claimed (this replica builds it), released (its builder said it will not share it: built here), gave_up (no answer within the wait, then built), unavailable (the store or the network did not say, or no subscription to be woken by)',
      ['result'], SHARED_LOOKUPS.map((result) => ({ result })))
  }

  sharedOperation (operation: Operation, result: OperationResult): void {
    this.#operations.inc({ operation, result })
  }

  sharedSubscriptionState (state: SubscriptionState): void {
    this.#subscriptionUp = state === 'up' ? 1 : 0
  }

  sharedStoreState (state: StoreState): void {
    this.#storeUp = state === 'up' ? 1 : 0
  }

  sharedHead (result: HintResult): void {
    this.#heads.inc({ result })
  }

  sharedAnswer (result: SharedLookup): void {
    this.#answers.inc({ result })
  }
}
