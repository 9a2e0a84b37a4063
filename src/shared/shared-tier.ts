import type { ChainHeads } from '../chain/heights.js'
import { HeadHints, type HintResult } from './head-hints.js'
import { SharedAnswers, type SharedLookup } from './shared-answers.js'
import { SharedStore, type StoreLog, type StoreObserver } from './store.js'

// The shared tier as the service wires it (docs/shared-tier.md): one store connection, the
// pool's heads as hints to this replica's ChainHeads, the pool's answers behind its answer
// cache. service.ts opens it only with EDGE_API_REDIS_URL; without it nothing here is loaded.

export interface SharedTierMetrics extends StoreObserver {
  sharedHead (result: HintResult): void
  sharedAnswer (result: SharedLookup): void
}

export interface SharedTierOptions {
  /** EDGE_API_REDIS_URL. */
  readonly url: string
  /** EDGE_API_MAX_NODE_LAG: how far ahead a shared head may be and still be looked at. */
  readonly maxLag: number
  readonly heads: ChainHeads
  /** Whether answers are shared: not without an answer cache (EDGE_API_CACHE_SIZE=0); heads still are. */
  readonly shareAnswers: boolean
  readonly log: StoreLog
  readonly metrics: SharedTierMetrics | undefined
}

export interface SharedTier {
  readonly store: SharedStore
  readonly hints: HeadHints
  readonly answers: SharedAnswers | undefined
  close (): Promise<void>
}

/** Loads the client, starts connecting (not waiting for it) and hooks the tier into the heads and the answer cache. */
export async function openSharedTier (options: SharedTierOptions): Promise<SharedTier> {
  const { metrics } = options
  const store = await SharedStore.open({ url: options.url, log: options.log, observer: metrics })
  const hints = new HeadHints({ store, maxLag: options.maxLag, log: options.log, onHint: (result) => metrics?.sharedHead(result) })
  options.heads.share(hints)
  hints.follow(options.heads)
  const answers = options.shareAnswers ? new SharedAnswers({ store, onLookup: (result) => metrics?.sharedAnswer(result) }) : undefined
  return { store, hints, answers, close: () => store.close() }
}
