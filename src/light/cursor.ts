import type { Timestamp } from '../cometbft/timestamp.js'
import { BISECTION_LIMITS, verifyToTarget, type BisectionLimits } from './bisection.js'
import { gatewayBlock, type GatewayBlock } from './gateway-json.js'
import { headerHash } from './header-hash.js'
import { followerOptions, trustedStateOf, type LightBlock, type LightOptions, type TrustedState } from './light-block.js'
import { LightReader, type LightSource, type NodeGet, type NodeRpc } from './light-reader.js'
import { trustFromRoot, type TrustRoot } from './trust-root.js'
import { Witnesses } from './witnesses.js'

// The verified-height cursor (docs/verified-reads.md, "Following the head"): the replica
// follows the chain as a light client, from the operator's trust root, on the blocks its head
// poll already reads. Each node's latest block (header L, with the commit for L - 1) lets the
// header L - 1 be verified: adjacent to the last verified header, its hash chained and 2/3 of
// its set; after a gap (a replica paused, a node behind) by skipping with 1/3 of the trusted
// set, bisecting when that is not enough (bounded: bisection.ts). The validator sets are
// fetched only when a header names one not met before (light-reader.ts).
//
// V, the newest height whose state is verified, is the verified header's height - 1: a
// header's app_hash is the state after the block before it. With REST nodes only, V = L - 2.
// A node with a CometBFT RPC endpoint (EDGE_API_CHAIN_RPC_URL) gives header L with the commit
// it has seen (RPC /commit): L itself is verified, and V = L - 1. While its RPC cannot be
// read, the node is followed over its gateway (L - 1 from it): an RPC away stops nothing.
//
// The nodes are witnesses of each other (witnesses.ts): a node whose header does not verify,
// or differs from a header verified at its height, is lying: one error line naming it and the
// height, and onLying takes it out of rotation. A verification failure is never retried from
// the node that caused it; a node that fails to answer is asked again on its next poll.

/** What the cursor logs (a pino logger fits). */
export interface CursorLog {
  info (fields: object, msg: string): void
  warn (fields: object, msg: string): void
  error (fields: object, msg: string): void
}

export interface CursorOptions {
  readonly nodeCount: number
  /** Each node's base URL, for the log. */
  readonly urls: readonly string[]
  readonly root: TrustRoot
  readonly light: LightOptions
  readonly reader: LightReader
  /** The clock headers are judged on (expiry, the future). */
  readonly now: () => Timestamp
  readonly log: CursorLog
  /** Node `node` was caught lying at `height`: take it out of rotation. */
  readonly onLying: (node: number, height: bigint) => void
  /** @default BISECTION_LIMITS */
  readonly limits?: BisectionLimits
}

/** The cursor's settings as the chain client is given them (EDGE_API_VERIFICATION not off). */
export interface VerificationOptions {
  readonly root: TrustRoot
  readonly trustingPeriodMs: number
  /** Where the cursor's lines go: a lying node's is an error. */
  readonly log: CursorLog
  /** Each node's CometBFT RPC base URL, by the nodes' order (undefined: none). @default none */
  readonly rpcUrls?: ReadonlyArray<string | undefined> | undefined
}

/** The cursor over a chain client's nodes (`urls`), reading their gateways with `get` and their RPC endpoints with `rpc`, on the wall clock. */
export function followingCursor (verification: VerificationOptions, urls: readonly string[], get: NodeGet, onLying: (node: number) => void, rpc?: NodeRpc): VerifiedCursor {
  return new VerifiedCursor({
    nodeCount: urls.length,
    urls,
    root: verification.root,
    light: followerOptions(verification.trustingPeriodMs),
    reader: new LightReader(get, rpc),
    now: () => timestampOfMs(Date.now()),
    log: verification.log,
    onLying
  })
}

/** Wall-clock milliseconds as a header's Timestamp. */
export function timestampOfMs (ms: number): Timestamp {
  return { seconds: Math.floor(ms / 1000), nanos: (ms % 1000) * 1_000_000 }
}

/** starting: no header verified yet; verifying: following the head; expired: the trusted header is past the trusting period. */
export type CursorState = 'starting' | 'verifying' | 'expired'

/** The line of a node caught lying. */
export const NODE_LYING = 'chain node lying: its header does not verify or contradicts a verified one; out of rotation'
/** The line of a node whose RPC cannot be read: followed over its gateway meanwhile. */
export const RPC_UNREADABLE = 'cannot read this chain node\'s RPC; following it over its gateway (V = L - 2 from it) until it answers'
/** Heights of a node's own latest blocks kept for its next step (the block before its latest). */
const KEPT_BLOCKS = 2
/**
 * Verified headers' app hashes kept, by height: a proven read pins V when it starts and
 * proves at V when its answer is in, a few blocks later at most; older states are asked of
 * nodes that may have pruned them, so a bounded window is enough (and memory stays flat).
 */
export const APP_HASH_WINDOW = 64

/** Also src/proven's VerifiedAppHashes (by shape: the light layer is below proven/). */
export class VerifiedCursor {
  readonly #options: CursorOptions
  readonly #witnesses: Witnesses
  /** Each node's latest block, not followed yet. */
  readonly #pending: Array<GatewayBlock | undefined>
  /** Each node's last blocks, by height: the header L - 1 of its next step comes from its previous poll. */
  readonly #recent: Array<Map<bigint, GatewayBlock>>
  /** Whether each node's last step failed to read: one warn line per episode. */
  readonly #unreadable: boolean[]
  /** Whether each node's RPC failed to answer its last step: one warn line per episode. */
  readonly #rpcUnreadable: boolean[]
  /** Verified headers' app hashes by header height, the newest APP_HASH_WINDOW. */
  readonly #appHashes = new Map<bigint, Uint8Array>()
  #trusted: TrustedState | undefined
  #expired = false
  #run: Promise<void> | undefined

  constructor (options: CursorOptions) {
    this.#options = options
    this.#witnesses = new Witnesses(options.nodeCount)
    this.#pending = new Array<GatewayBlock | undefined>(options.nodeCount).fill(undefined)
    this.#recent = Array.from({ length: options.nodeCount }, () => new Map())
    this.#unreadable = new Array<boolean>(options.nodeCount).fill(false)
    this.#rpcUnreadable = new Array<boolean>(options.nodeCount).fill(false)
  }

  /** V: the newest height whose state (app hash) is verified; undefined until a header is. */
  get height (): number | undefined {
    return this.#trusted === undefined ? undefined : Number(this.#trusted.header.height) - 1
  }

  get state (): CursorState {
    if (this.#expired) return 'expired'
    return this.#trusted === undefined ? 'starting' : 'verifying'
  }

  /** The app hash of the state after block `height`: verified header height + 1's, while in the window. */
  appHashAfter (height: number): Uint8Array | undefined {
    return this.#appHashes.get(BigInt(height) + 1n)
  }

  /** Whether node `node` was caught lying. */
  lying (node: number): boolean {
    return this.#witnesses.lyingAt(node) !== undefined
  }

  /** Node `node`'s head poll answered `answer` (its latest block): followed in the background, one node at a time. */
  told (node: number, answer: unknown): void {
    try {
      this.#pending[node] = gatewayBlock(answer)
    } catch (err) {
      this.#unreadableOnce(node, err)
      return
    }
    this.#run ??= this.#drain().finally(() => { this.#run = undefined })
  }

  /** Resolves once every block told so far is followed (tests, shutdown). */
  async settled (): Promise<void> {
    await this.#run
  }

  async #drain (): Promise<void> {
    for (let node = this.#next(); node !== undefined; node = this.#next()) {
      const block = this.#pending[node] as GatewayBlock
      this.#pending[node] = undefined
      try {
        await this.#follow(node, block)
        this.#unreadable[node] = false
      } catch (err) {
        this.#unreadableOnce(node, err)
      }
    }
  }

  #next (): number | undefined {
    const node = this.#pending.findIndex((block) => block !== undefined)
    return node === -1 ? undefined : node
  }

  async #follow (node: number, block: GatewayBlock): Promise<void> {
    if (this.#expired || this.lying(node)) return
    const { header } = block
    const witnesses = this.#witnesses
    if (witnesses.told(node, header.height, hashOf(block)) || witnesses.told(node, header.height - 1n, header.lastBlockId.hash)) {
      this.#lying(node, header.height, 'its header is not the one verified at this height from another node')
      return
    }
    const recent = this.#recent[node] as Map<bigint, GatewayBlock>
    recent.set(header.height, block)
    for (const height of recent.keys()) if (height <= header.height - BigInt(KEPT_BLOCKS)) recent.delete(height)
    if (this.#options.reader.seesHeadCommit(node)) {
      try {
        await this.#verifyHead(node, header.height, 'rpc')
        this.#rpcUnreadable[node] = false
        return
      } catch (err) {
        this.#rpcUnreadableOnce(node, err)
      }
    }
    await this.#verifyHead(node, header.height - 1n, 'gateway')
  }

  /** Verifies up to `target` (node `node`'s newest header whose commit `via` gives), from the trust root on first contact. */
  async #verifyHead (node: number, target: bigint, via: LightSource): Promise<void> {
    const trusted = this.#trusted ?? await this.#fromRoot(node, via)
    if (trusted === undefined || target <= trusted.header.height) return
    const options = this.#options
    const recent = this.#recent[node] as Map<bigint, GatewayBlock>
    const outcome = await verifyToTarget(trusted, target, options.reader.fetcher(node, recent, via), options.now(), options.light, options.limits ?? BISECTION_LIMITS)
    this.#accept(outcome.verified)
    if (outcome.ok) return
    if (outcome.kind === 'invalid') this.#lying(node, outcome.height, outcome.reason)
    else if (outcome.kind === 'expired') this.#expire(outcome.reason)
    else options.log.warn({ node: options.urls[node], height: String(outcome.height), reason: outcome.reason }, 'verified height not advanced: the trusted validators cannot vouch for the header yet')
  }

  /** The trusted state from the operator's root, its header read from `node`. */
  async #fromRoot (node: number, via: LightSource): Promise<TrustedState | undefined> {
    const { root, reader, now, light, log } = this.#options
    const block = await reader.fetcher(node, new Map(), via)(root.height)
    const outcome = trustFromRoot(root, block, now(), light.trustingPeriodMs)
    if (!outcome.ok) {
      if (outcome.kind === 'expired') this.#expire(outcome.reason)
      else this.#lying(node, root.height, outcome.reason)
      return undefined
    }
    this.#witnesses.verified(root.height, root.hash)
    this.#trust(outcome.state)
    log.info({ height: String(root.height) }, 'verifying the chain\'s headers from the trust root')
    return outcome.state
  }

  /** Blocks verified in order: the newest is trusted; a node that told another header at one of their heights is lying. */
  #accept (verified: readonly LightBlock[]): void {
    for (const block of verified) {
      const { height } = block.signedHeader.header
      for (const node of this.#witnesses.verified(height, hashOf(block.signedHeader))) {
        this.#lying(node, height, 'its header is not the one verified at this height')
      }
      this.#trust(trustedStateOf(block))
    }
  }

  #trust (state: TrustedState): void {
    this.#trusted = state
    const { height, appHash } = state.header
    this.#appHashes.set(height, appHash)
    for (const kept of this.#appHashes.keys()) if (kept <= height - BigInt(APP_HASH_WINDOW)) this.#appHashes.delete(kept)
  }

  /** Never called twice for a node: #follow skips a liar, and Witnesses.verified names none already lying. */
  #lying (node: number, height: bigint, reason: string): void {
    this.#witnesses.mark(node, height)
    this.#options.log.error({ node: this.#options.urls[node], height: String(height), reason }, NODE_LYING)
    this.#options.onLying(node, height)
  }

  #expire (reason: string): void {
    this.#expired = true
    this.#options.log.error({ reason }, 'verification stopped: the trusted header has expired; set EDGE_API_TRUST_HEIGHT and EDGE_API_TRUST_HASH to a newer header and restart')
  }

  #rpcUnreadableOnce (node: number, err: unknown): void {
    if (this.#rpcUnreadable[node] === true) return
    this.#rpcUnreadable[node] = true
    this.#options.log.warn({ node: this.#options.urls[node], err: (err as Error).message }, RPC_UNREADABLE)
  }

  #unreadableOnce (node: number, err: unknown): void {
    if (this.#unreadable[node] === true) return
    this.#unreadable[node] = true
    this.#options.log.warn({ node: this.#options.urls[node], err: (err as Error).message }, 'cannot read the blocks to verify from this chain node; asked again on its next head poll')
  }
}

function hashOf ({ header }: { readonly header: GatewayBlock['header'] }): Uint8Array {
  return headerHash(header) ?? new Uint8Array()
}
