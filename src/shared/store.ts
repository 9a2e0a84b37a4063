import type { RedisClientType } from '@redis/client'
import { KEEPS_ALIVE, REAL_CLOCK, type Clock } from '../clock.js'

// The shared tier's one connection to its Redis or Valkey (docs/shared-tier.md). The store is
// never on a request's critical path: every command has a deadline of a few milliseconds, and
// any failure (down, slow, full, refusing) is an answer of "nothing there" to the caller, who
// then does what a replica without the store does. The client is node-redis (BENCHMARKS.md,
// "Redis client"), imported only when EDGE_API_REDIS_URL is set.

/** What a command's caller is told happened to it (edge_api_shared_operations_total). */
export type OperationResult = 'ok' | 'timeout' | 'error' | 'skipped'
export const OPERATION_RESULTS: readonly OperationResult[] = ['ok', 'timeout', 'error', 'skipped']
export type Operation = 'get' | 'set' | 'claim' | 'publish' | 'count'
export const OPERATIONS: readonly Operation[] = ['get', 'set', 'claim', 'publish', 'count']

/**
 * The store as this replica sees it: connecting (not yet answered), up, down (no
 * connection), unresponsive (connected, its commands past their deadline: frozen or
 * overloaded). Only `up` sends commands; `unresponsive` lets one through now and then to see.
 */
export type StoreState = 'connecting' | 'up' | 'down' | 'unresponsive'
export const STORE_STATES: readonly StoreState[] = ['connecting', 'up', 'down', 'unresponsive']

/** Told of every command's result and every change of state (src/metrics/ counts them). */
export interface StoreObserver {
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
  readonly log: StoreLog
  readonly observer?: StoreObserver
  /** The deadline of every command. @default COMMAND_TIMEOUT_MS */
  readonly commandTimeoutMs?: number
  /** How long an unresponsive store is left alone before one command tries it again. @default RETRY_UNRESPONSIVE_MS */
  readonly retryUnresponsiveMs?: number
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
/** Consecutive timeouts that make the store unresponsive: one slow answer is noise, three are a frozen store. */
export const TIMEOUTS_TO_UNRESPONSIVE = 3
export const RETRY_UNRESPONSIVE_MS = 1000
/** Reconnection attempts after the connection is lost: every 250 ms, so a restarted store is used again within a second. */
export const RECONNECT_MS = 250

/** The URL with its password (if any) replaced by ***, for the log. */
export function redactedUrl (url: string): string {
  const parsed = new URL(url)
  if (parsed.password !== '') parsed.password = '***'
  return parsed.href
}

type Client = RedisClientType

const TIMED_OUT = Symbol('timed out')

const NO_OBSERVER: StoreObserver = { sharedOperation () {}, sharedStoreState () {} }

/**
 * The store's connections (one for commands, one subscribed to the channels of
 * subscribe()), their state, one log line per change of it, and commands that never take
 * longer than their deadline nor throw. Connects in the background: a replica starts and
 * serves whether the store is there or not.
 */
export class SharedStore {
  readonly #client: Client
  readonly #subscriber: Client
  readonly #log: StoreLog
  readonly #observer: StoreObserver
  readonly #timeoutMs: number
  readonly #retryMs: number
  readonly #clock: Clock
  readonly #where: string
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
    this.#observer = options.observer ?? NO_OBSERVER
    this.#timeoutMs = options.commandTimeoutMs ?? COMMAND_TIMEOUT_MS
    this.#retryMs = options.retryUnresponsiveMs ?? RETRY_UNRESPONSIVE_MS
    this.#clock = options.clock ?? REAL_CLOCK
    this.#where = redactedUrl(options.url)
    const clientOptions = {
      url: options.url,
      // A command while the connection is down fails at once: nothing waits for a store that is not there.
      disableOfflineQueue: true,
      socket: { connectTimeout: 1000, reconnectStrategy: () => RECONNECT_MS }
    }
    this.#client = createClient(clientOptions) as unknown as Client
    this.#subscriber = createClient(clientOptions) as unknown as Client
    // The client reports each failed connection attempt as an error event; the state says it once.
    this.#client.on('error', (err: Error) => { this.#become('down', err) })
    this.#client.on('ready', () => { this.#answered() })
    this.#subscriber.on('error', () => {})
    this.#client.connect().catch(() => {})
    this.#subscriber.connect().catch(() => {})
  }

  get state (): StoreState {
    return this.#state
  }

  /** The value at `key`; undefined when there is none or the store did not say in time. */
  async get (key: string): Promise<string | undefined> {
    const value = await this.#command('get', () => this.#client.get(key))
    return typeof value === 'string' ? value : undefined
  }

  /** Stores `value` at `key` for `ttlMs`, in the background: nobody waits for it. */
  set (key: string, value: string, ttlMs: number): void {
    this.#command('set', () => this.#client.set(key, value, { PX: ttlMs }))
  }

  /**
   * Takes `key` for `ttlMs` if nobody holds it (SET NX PX): true when taken, false when
   * another holds it, undefined when the store did not say in time.
   */
  async claim (key: string, ttlMs: number): Promise<boolean | undefined> {
    const reply = await this.#command('claim', () => this.#client.set(key, '1', { NX: true, PX: ttlMs }))
    return reply === undefined ? undefined : reply === 'OK'
  }

  /** Runs a Lua script (EVAL) on `keys` with `args`: its reply, or undefined when the store did not say in time. */
  async evaluate (operation: Operation, script: string, keys: string[], args: string[]): Promise<unknown> {
    return this.#command(operation, () => this.#client.eval(script, { keys, arguments: args }))
  }

  /** Publishes `message` on `channel`, in the background. */
  publish (channel: string, message: string): void {
    this.#command('publish', () => this.#client.publish(channel, message))
  }

  /** Calls `listener` with each message on `channel` (resubscribed after a reconnection by the client). */
  subscribe (channel: string, listener: (message: string) => void): void {
    this.#subscriber.subscribe(channel, listener).catch(() => {})
  }

  /** Closes both connections (after the drain: nothing is waiting on them). */
  async close (): Promise<void> {
    this.#closed = true
    for (const client of [this.#client, this.#subscriber]) client.destroy()
  }

  async #command<T> (operation: Operation, send: () => Promise<T>): Promise<T | undefined> {
    if (!this.#sendable()) {
      this.#observer.sharedOperation(operation, 'skipped')
      return undefined
    }
    // The deadline is ours, not the client's: node-redis's command timeout only covers a
    // command not yet written, and a frozen store has every command written and none
    // answered (BENCHMARKS.md, "Redis client"). A reply after the deadline is dropped.
    // The deadline is judged after the I/O already waiting has been read (setImmediate runs
    // after the poll phase): when this replica's own event loop stalls past the deadline, a
    // reply that arrived meanwhile wins, and a busy replica does not take its own delay for
    // a frozen store (on the loaded test machine that tripped the store "unresponsive").
    // A timer that fires more than a deadline late says this replica's own event loop stalled
    // (a GC pause, a long tick): the command may not even have been written yet, so the store
    // gets its deadline once more, from now, before it is judged.
    // The deadline's timer keeps the process alive, as the command's own socket does.
    let cancelTimer!: () => void
    let immediate: NodeJS.Immediate | undefined
    const startedAt = this.#clock.now()
    let extended = false
    const deadline = new Promise<typeof TIMED_OUT>((resolve) => {
      const due = (): void => {
        if (!extended && this.#clock.now() - startedAt > 2 * this.#timeoutMs) {
          extended = true
          cancelTimer = this.#clock.after(this.#timeoutMs, due, KEEPS_ALIVE)
          return
        }
        immediate = setImmediate(resolve, TIMED_OUT)
      }
      cancelTimer = this.#clock.after(this.#timeoutMs, due, KEEPS_ALIVE)
    })
    const sent = send()
    try {
      const reply = await Promise.race([sent, deadline])
      // A rejection after the deadline is the race's, which has handled it: none goes unhandled.
      if (reply === TIMED_OUT) {
        this.#observer.sharedOperation(operation, 'timeout')
        if (++this.#timeouts >= TIMEOUTS_TO_UNRESPONSIVE) {
          this.#retryAt = this.#clock.now() + this.#retryMs
          this.#become('unresponsive')
        }
        return undefined
      }
      this.#observer.sharedOperation(operation, 'ok')
      this.#answered()
      return reply
    } catch {
      // Refused (full: OOM, a read-only replica, a command not allowed), or the connection
      // lost: the 'error' event says which, once.
      this.#observer.sharedOperation(operation, 'error')
    } finally {
      cancelTimer()
      clearImmediate(immediate)
    }
    return undefined
  }

  /** Up: send. Unresponsive: one command once the wait is over (its answer decides). Otherwise: not connected. */
  #sendable (): boolean {
    if (this.#state === 'unresponsive') {
      if (this.#clock.now() < this.#retryAt) return false
      this.#retryAt = this.#clock.now() + this.#retryMs
      return this.#client.isReady
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
    this.#observer.sharedStoreState(state)
    const fields = { store: this.#where, previous, error: err?.message }
    if (state === 'up') this.#log.info(fields, 'shared store up; replicas share heads and answers')
    else if (state === 'down') this.#log.warn(fields, 'shared store down; this replica serves on its own until it is back')
    else this.#log.warn(fields, 'shared store unresponsive; this replica serves on its own until it answers')
  }
}
