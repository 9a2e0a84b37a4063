import type { ChainHeads } from '../chain/heights.js'
import { NODE_INFO_PATH } from '../chain/paths.js'
import { REAL_CLOCK, type Clock } from '../clock.js'
import { HeadHints, type HintResult } from './head-hints.js'
import { SharedAnswers, type SharedLookup } from './shared-answers.js'
import { SharedStore, type StoreLog, type StoreObserver } from './store.js'

// The shared tier as the service wires it (docs/shared-tier.md): one store, the pool's heads
// as hints to this replica's ChainHeads, the pool's answers for its answer cache, and the
// per-client limit's buckets (rate-counter.ts, service.ts), each named by the chain's network
// (asked of the chain until it answers): a store shared by pools of two chains keeps them
// apart. Answers are also named by this build's version. service.ts opens it only with
// EDGE_API_REDIS_URL; without it nothing here is loaded.

export interface SharedTierMetrics extends StoreObserver {
  sharedHead (result: HintResult): void
  sharedAnswer (result: SharedLookup): void
}

/** What the tier asks of the chain: node_info, for the network answers are named by. */
export interface NetworkSource {
  get (path: string): Promise<unknown>
}

export interface SharedTierOptions {
  /** EDGE_API_REDIS_URL. */
  readonly url: string
  /** EDGE_API_REDIS_PASSWORD. */
  readonly password: string | undefined
  /** EDGE_API_REDIS_TIMEOUT: a command's deadline. @default the store's, COMMAND_TIMEOUT_MS */
  readonly commandTimeoutMs?: number | undefined
  /** EDGE_API_REDIS_SECRET: shared answers are signed with it; undefined: digested only. */
  readonly secret: string | undefined
  /** EDGE_API_MAX_NODE_LAG: how far ahead a shared head may be and still be looked at. */
  readonly maxLag: number
  readonly heads: ChainHeads
  readonly chain: NetworkSource
  /** This build (its version and commit) and its EDGE_API_VERIFICATION mode: answers of another build, or another mode's (unproven, or proven at V), are another format. */
  readonly format: string
  /** Whether answers are shared (an answer cache to keep them: EDGE_API_CACHE_SIZE > 0); heads always are. */
  readonly shareAnswers: boolean
  readonly log: StoreLog
  readonly metrics: SharedTierMetrics | undefined
  /** What the network's retries are timed on. @default REAL_CLOCK */
  readonly clock?: Clock
}

export interface SharedTier {
  readonly store: SharedStore
  /** The pool's heads, once the chain's network is known (they are published on its channel). */
  readonly hints: () => HeadHints | undefined
  /** The chain's network, once a node has named it: what every key and channel is named by. */
  readonly network: () => string | undefined
  /** The pool's answers, for the answer cache; undefined when answers are not shared. */
  readonly answers: SharedAnswers | undefined
  close (): Promise<void>
}

/** How long after a failed node_info the network is asked for again. */
export const NETWORK_RETRY_MS = 1000

/** Loads the client, starts connecting (not waiting for it) and hooks the tier into the heads. */
export async function openSharedTier (options: SharedTierOptions): Promise<SharedTier> {
  const { metrics } = options
  const clock = options.clock ?? REAL_CLOCK
  const store = await SharedStore.open({ url: options.url, password: options.password, commandTimeoutMs: options.commandTimeoutMs, log: options.log, observer: metrics })
  let hints: HeadHints | undefined
  let closed = false
  const network = new ChainNetwork({
    chain: options.chain,
    clock,
    log: options.log,
    closed: () => closed,
    named: (name) => {
      hints = new HeadHints({ store, network: name, heads: options.heads, maxLag: options.maxLag, log: options.log, onHint: (result) => metrics?.sharedHead(result) })
    }
  })
  const answers = options.shareAnswers
    ? new SharedAnswers({ store, network: () => network.name, format: options.format, secret: options.secret, onLookup: (result) => metrics?.sharedAnswer(result) })
    : undefined
  return {
    store,
    hints: () => hints,
    network: () => network.name,
    answers,
    close: async () => {
      closed = true
      hints?.close()
      await store.close()
    }
  }
}

/** The chain's network as its nodes name it (node_info's default_node_info.network), asked until one answers. */
class ChainNetwork {
  name: string | undefined

  constructor ({ chain, clock, log, closed, named }: { chain: NetworkSource, clock: Clock, log: StoreLog, closed: () => boolean, named: (name: string) => void }) {
    const ask = (): void => {
      // A retry armed before the tier closed finds it closed: the chain is asked nothing more.
      if (closed()) return
      chain.get(NODE_INFO_PATH).then((info) => {
        const network = (info as { default_node_info?: { network?: unknown } } | null)?.default_node_info?.network
        if (typeof network !== 'string' || network === '') throw new Error('node_info names no network')
        this.name = network
        log.info({ network }, 'shared answers named for this chain\'s network (and heads and limits)')
        named(network)
      }).catch(() => { clock.after(NETWORK_RETRY_MS, ask) })
    }
    ask()
  }
}
