import type { RedisClientType } from '@redis/client'
import { createHash } from 'node:crypto'
import { REAL_CLOCK, type Clock } from '../clock.js'
import { TIMED_OUT, withinDeadline } from './deadline.js'
import { Subscription, type SubscriptionObserver } from './subscription.js'

// The shared tier's connections to its Redis or Valkey (docs/shared-tier.md). The store is
// never on a request's critical path: every command has a deadline of a few milliseconds, and
// any failure (down, slow, full, refusing) is an answer of "nothing there" to the caller, who
// then does what a replica without the store does. The client is node-redis (BENCHMARKS.md,
// "Redis client"), imported only when EDGE_API_REDIS_URL is set.

/** What a command's caller is told happened to it (edge_api_shared_operations_total). */
export type OperationResult = 'ok' | 'timeout' | 'error' | 'skipped'
export const OPERATION_RESULTS: readonly OperationResult[] = ['ok', 'timeout', 'error', 'skipped']
export type Operation = 'get' | 'set' | 'claim' | 'release' | 'publish' | 'count'
export const OPERATIONS: readonly Operation[] = ['get', 'set', 'claim', 'release', 'publish', 'count']

/**
 * The store as this replica's command connection sees it: connecting (not yet answered), up,
 * down (no connection), unresponsive (connected, its reads past their deadline: frozen or
 * overloaded). Only `up` sends commands; `unresponsive` lets one through now and then to see.
 */
export type StoreState = 'connecting' | 'up' | 'down' | 'unresponsive'

/** Told of every command's result and every change of state (src/metrics/ counts them). */
export interface StoreObserver extends SubscriptionObserver {
  sharedOperation (operation: Operation, result: OperationResult): void
  sharedStoreState (state: StoreState): void
}

export interface StoreLog {
  info (fields: object, message: string): void
  warn (fields: object, message: string): void
}

export interface SharedStoreOptions {
  /** EDGE_API_REDIS_URL: never logged as given (redactedUrl). */
  readonly url: string
  /** EDGE_API_REDIS_PASSWORD: used when the URL carries none. */
  readonly password?: string
  readonly log: StoreLog
  readonly observer?: StoreObserver
  /** The deadline of every command. @default COMMAND_TIMEOUT_MS */
  readonly commandTimeoutMs?: number
  /** How long an unresponsive store is left alone before one command tries it again. @default RETRY_UNRESPONSIVE_MS */
  readonly retryUnresponsiveMs?: number
  /** How often the subscribing connection pings the store, so a dead one is seen. @default PING_INTERVAL_MS */
  readonly pingIntervalMs?: number
  /** What the commands' deadlines and the retry wait are timed on. @default REAL_CLOCK */
  readonly clock?: Clock
}

/**
 * A command's deadline. A round trip to a store on the same network is ~0.1 ms
 * (BENCHMARKS.md); the rest is room for the replica's own event-loop delay, which at its
 * load-shedding target (EDGE_API_SHED_DELAY, 20 ms) would otherwise turn answers that
 * arrived into timeouts. A read that waits this long still costs less than the chain read
 * it saves.
 */
export const COMMAND_TIMEOUT_MS = 10
/** Consecutive read timeouts that make the store unresponsive: one slow answer is noise, three are a frozen store. */
export const TIMEOUTS_TO_UNRESPONSIVE = 3
export const RETRY_UNRESPONSIVE_MS = 1000
/** Reconnection attempts after the connection is lost: every 250 ms, so a restarted store is used again within a second… */
export const RECONNECT_MS = 250
/** …plus up to this much at random, so a pool's replicas do not reconnect in lockstep. */
export const RECONNECT_JITTER_MS = 100
/** The subscribing connection hears nothing of its own when no block moves: a ping says it is alive. */
export const PING_INTERVAL_MS = 5000

/** Releases `KEYS[1]` only if `ARGV[1]` still holds it: a claim that expired and was taken by another is not theirs to lose. */
const RELEASE_SCRIPT = 'if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) else return 0 end'

/** The URL with its whole userinfo (user and password: either may be the secret) replaced by ***, for the log. */
export function redactedUrl (url: string): string {
  const parsed = new URL(url)
  if (parsed.username !== '' || parsed.password !== '') {
    parsed.username = '***'
    parsed.password = ''
  }
  return parsed.href
}

/** Reads are waited for (their timeouts judge the store); writes are sent in the background, their deadline theirs alone. */
type Kind = 'read' | 'write'

/**
 * The store's connections (one for commands, one subscribed: src/shared/subscription.ts),
 * their state, one log line per change of it, and commands that never take longer than their
 * deadline nor throw. Connects in the background: a replica starts and serves whether the
 * store is there or not.
 */
export class SharedStore {
  readonly #client: RedisClientType
  readonly #subscription: Subscription
  readonly #log: StoreLog
  readonly #observer: StoreObserver | undefined
  readonly #timeoutMs: number
  readonly #retryMs: number
  readonly #clock: Clock
  readonly #where: string
  /** Each script's SHA1, as the store names it: computed once. */
  readonly #shas = new Map<string, string>()
  #state: StoreState = 'connecting'
  #timeouts = 0
  #retryAt = 0
  #closed = false

  /** Loads the client library and starts connecting; resolves at once, connected or not. */
  static async open (options: SharedStoreOptions): Promise<SharedStore> {
    const { createClient } = await import('@redis/client')
    return new SharedStore(createClient, options)
  }

  private constructor (createClient: typeof import('@redis/client').createClient, options: SharedStoreOptions) {
    this.#log = options.log
    this.#observer = options.observer
    this.#timeoutMs = options.commandTimeoutMs ?? COMMAND_TIMEOUT_MS
    this.#retryMs = options.retryUnresponsiveMs ?? RETRY_UNRESPONSIVE_MS
    this.#clock = options.clock ?? REAL_CLOCK
    this.#where = redactedUrl(options.url)
    const connection = { url: options.url, password: options.password, socket: { connectTimeout: 1000, reconnectStrategy: () => RECONNECT_MS + Math.floor(Math.random() * RECONNECT_JITTER_MS) } }
    // A command while the connection is down fails at once: nothing waits for a store that is not there.
    this.#client = createClient({ ...connection, disableOfflineQueue: true, name: 'edge-api' }) as unknown as RedisClientType
    // The client reports each failed connection attempt as an error event; the state says it once.
    this.#client.on('error', (err: Error) => { this.#become('down', err) })
    this.#client.on('ready', () => { this.#answered() })
    this.#client.connect().catch(() => {})
    // The subscriber keeps its offline queue: a SUBSCRIBE made while the store is away waits for it.
    const pingIntervalMs = options.pingIntervalMs ?? PING_INTERVAL_MS
    const subscriber = createClient({ ...connection, name: 'edge-api-sub', pingInterval: pingIntervalMs }) as unknown as RedisClientType
    this.#subscription = new Subscription(subscriber, { log: options.log, observer: options.observer, where: this.#where, pingIntervalMs, clock: this.#clock })
  }

  get state (): StoreState {
    return this.#state
  }

  /** Whether this replica hears the channels it subscribed to (see Subscription). */
  get hearing (): boolean {
    return this.#subscription.state === 'up'
  }

  /** The value at `key`; undefined when there is none or the store did not say in time. */
  async get (key: string): Promise<string | undefined> {
    const value = await this.#command('get', 'read', () => this.#client.get(key))
    return typeof value === 'string' ? value : undefined
  }

  /** Stores `value` at `key` for `ttlMs`, in the background: nobody waits for it. */
  set (key: string, value: string, ttlMs: number): void {
    this.#command('set', 'write', () => this.#client.set(key, value, { PX: ttlMs }))
  }

  /**
   * Takes `key` for `owner` for `ttlMs` if nobody holds it (SET NX PX): true when taken,
   * false when another holds it, undefined when the store did not say in time.
   */
  async claim (key: string, owner: string, ttlMs: number): Promise<boolean | undefined> {
    const reply = await this.#command('claim', 'read', () => this.#client.set(key, owner, { NX: true, PX: ttlMs }))
    return reply === undefined ? undefined : reply === 'OK'
  }

  /** Deletes `key` if `owner` still holds it (compare-and-delete), in the background. */
  release (key: string, owner: string): void {
    this.#command('release', 'write', () => this.#client.eval(RELEASE_SCRIPT, { keys: [key], arguments: [owner] }))
  }

  /**
   * Runs a Lua script on `keys` with `args`: its reply, or undefined when the store did not say
   * in time. Asked by its SHA1 (EVALSHA: 40 bytes, not the script, per call); a store that does
   * not know it (new, restarted, flushed: NOSCRIPT) is sent the whole script once (EVAL, which
   * keeps it for the next EVALSHA), within the same deadline.
   */
  async evaluate (operation: Operation, script: string, keys: string[], args: string[]): Promise<unknown> {
    const sha = this.#shaOf(script)
    const options = { keys, arguments: args }
    return this.#command(operation, 'read', async () => {
      try {
        return await this.#client.evalSha(sha, options)
      } catch (err) {
        if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err
        return await this.#client.eval(script, options)
      }
    })
  }

  #shaOf (script: string): string {
    let sha = this.#shas.get(script)
    if (sha === undefined) {
      sha = createHash('sha1').update(script).digest('hex')
      this.#shas.set(script, sha)
    }
    return sha
  }

  /** Publishes `message` on `channel`, in the background. */
  publish (channel: string, message: string): void {
    this.#command('publish', 'write', () => this.#client.publish(channel, message))
  }

  /** Calls `listener` with each message on `channel`, from whenever the store first answers. */
  subscribe (channel: string, listener: (message: string) => void): void {
    this.#subscription.subscribe(channel, listener)
  }

  /** Closes both connections (after the drain: nothing is waiting on them). */
  async close (): Promise<void> {
    this.#closed = true
    this.#client.destroy()
    this.#subscription.close()
  }

  async #command<T> (operation: Operation, kind: Kind, send: () => Promise<T>): Promise<T | undefined> {
    if (!this.#sendable()) return this.#counted(operation, 'skipped')
    try {
      const reply = await withinDeadline(send(), this.#clock, this.#deadlineOf(kind))
      if (reply === TIMED_OUT) {
        if (kind === 'read') this.#timedOut()
        return this.#counted(operation, 'timeout')
      }
      this.#answered()
      this.#observer?.sharedOperation(operation, 'ok')
      return reply
    } catch {
      // Refused (full: OOM, a read-only replica, a command not allowed), or the connection
      // lost: the 'error' event says which, once.
      return this.#counted(operation, 'error')
    }
  }

  /** A write of up to MAX_SHARED_BYTES takes ~8 ms on 1 Gb/s before its round trip: ten deadlines, and never judged. */
  #deadlineOf (kind: Kind): number {
    return kind === 'read' ? this.#timeoutMs : 10 * this.#timeoutMs
  }

  #counted (operation: Operation, result: OperationResult): undefined {
    this.#observer?.sharedOperation(operation, result)
    return undefined
  }

  #timedOut (): void {
    if (++this.#timeouts < TIMEOUTS_TO_UNRESPONSIVE) return
    this.#retryAt = this.#clock.now() + this.#retryMs
    this.#become('unresponsive')
  }

  /** Up: send. Unresponsive: one command once the wait is over (its answer decides). Otherwise: not connected. */
  #sendable (): boolean {
    if (this.#state === 'unresponsive') {
      if (this.#clock.now() < this.#retryAt) return false
      this.#retryAt = this.#clock.now() + this.#retryMs
    }
    return this.#client.isReady
  }

  #answered (): void {
    this.#timeouts = 0
    this.#become('up')
  }

  #become (state: StoreState, err?: Error): void {
    if (state === this.#state || this.#closed) return
    const previous = this.#state
    this.#state = state
    this.#observer?.sharedStoreState(state)
    const fields = { store: this.#where, previous, error: err?.message }
    if (state === 'up') this.#log.info(fields, 'shared store up; replicas share heads and answers')
    else if (state === 'down') this.#log.warn(fields, 'shared store down; this replica serves on its own until it is back')
    else this.#log.warn(fields, 'shared store unresponsive; this replica serves on its own until it answers')
  }
}
