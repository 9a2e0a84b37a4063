import type { VerifiedCursor } from './cursor.js'

// How far behind the chain's head the verified height V is (docs/verified-reads.md,
// "Freshness"): /v1/status says it, and in `strict` mode readiness refuses a replica that
// does not know V or lags too far: its verified answers would be old, and a balancer should
// send the traffic to a replica that follows.

/**
 * Blocks between V and the best head beyond which a `strict` replica is not ready. V is two
 * blocks behind with REST nodes (the commit for header L arrives with block L + 1, and
 * header L - 1's app hash is the state of L - 2), one with their CometBFT RPC (its /commit
 * gives L's seen commit); the head poll runs every half EDGE_API_HEAD_MAX_AGE, so a following
 * replica is 2 to 3 behind (1 to 2). 10 (about a minute of
 * gonka's 5-6 s blocks) is a cursor that stopped (every node lying, an expired root, nodes
 * that cannot serve the blocks), not one that is slow.
 */
export const STRICT_MAX_BEHIND_BLOCKS = 10

/** What freshness reads: the cursor and the best head (a ChainClient fits). */
export interface VerifiedSource {
  readonly verified: VerifiedCursor | undefined
  readonly heads: { readonly best: number }
}

/** V's blocks behind the best head; undefined when V or the head is not known. */
export function blocksBehind (source: VerifiedSource): number | undefined {
  const verified = source.verified?.height
  const best = source.heads.best
  return verified === undefined || best === 0 ? undefined : Math.max(0, best - verified)
}

/** Readiness's check in `strict` mode: why the replica is not ready (client-safe), undefined when it is. */
export function strictFreshness (source: VerifiedSource): () => string | undefined {
  return () => {
    const state = source.verified?.state ?? 'off'
    if (state === 'expired') return 'the trusted header has expired'
    const behind = blocksBehind(source)
    if (behind === undefined) return 'no verified height yet'
    if (behind > STRICT_MAX_BEHIND_BLOCKS) return `the verified height is ${behind} blocks behind the head, more than ${STRICT_MAX_BEHIND_BLOCKS}`
    return undefined
  }
}
