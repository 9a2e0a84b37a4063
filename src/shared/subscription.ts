import type { RedisClientType } from '@redis/client'
import type { Clock } from '../clock.js'

// The store's second connection, the one subscribed to the pool's channels (heads, built
// answers). Unlike the command connection it queues while the store is away: a SUBSCRIBE made
// before the store first answers is sent once it does, whatever the start order of the
// deployment (compose and Kubernetes start the store and the replicas in no order). A
// subscription the store lost (refused, or the connection cut before its reply) is made again
// on the next 'ready'; one it acknowledged, the client itself makes again after a reconnection.
// Its health is its own: it can be down while commands go through, and the replica then hears
// no heads nor built answers, which its log line and edge_api_shared_subscription_up say.
// A store that stops answering without closing the connection (frozen, overloaded, a network
// that drops packets) fails no ping: node-redis's PING has no deadline and the next is sent only
// once it is answered. So the subscription counts itself down when no ping has been answered
// for PINGS_MISSED intervals, and up again with the next answer.

/** Ping intervals without an answer after which the subscription is down. */
export const PINGS_MISSED = 2

/** connecting: not yet subscribed; up: every channel subscribed and the connection answering its pings; down: not. */
export type SubscriptionState = 'connecting' | 'up' | 'down'

export interface SubscriptionObserver {
  sharedSubscriptionState (state: SubscriptionState): void
}

export interface SubscriptionLog {
  info (fields: object, message: string): void
  warn (fields: object, message: string): void
}

type Listener = (message: string) => void

/** A channel this replica listens to: missing (to be asked for on the next 'ready'), asked (its SUBSCRIBE in flight or queued), held (acknowledged). */
interface Channel { readonly listener: Listener, state: 'missing' | 'asked' | 'held' }

export interface SubscriptionOptions {
  readonly log: SubscriptionLog
  readonly observer: SubscriptionObserver | undefined
  /** Where the store is, for the log lines. */
  readonly where: string
  /** The client's pingInterval: how often an answered connection is pinged. */
  readonly pingIntervalMs: number
  readonly clock: Clock
}

/** The subscribing connection, its channels and its state (one log line per change of it). */
export class Subscription {
  readonly #client: RedisClientType
  readonly #log: SubscriptionLog
  readonly #observer: SubscriptionObserver | undefined
  readonly #where: string
  /** Held channels the client itself subscribes again after a reconnection. */
  readonly #channels = new Map<string, Channel>()
  readonly #clock: Clock
  readonly #silenceMs: number
  #state: SubscriptionState = 'connecting'
  #closed = false
  #cancelSilence: (() => void) | undefined

  constructor (client: RedisClientType, options: SubscriptionOptions) {
    this.#client = client
    this.#log = options.log
    this.#observer = options.observer
    this.#where = options.where
    this.#clock = options.clock
    this.#silenceMs = PINGS_MISSED * options.pingIntervalMs
    client.on('ready', () => {
      this.#askMissing()
      this.#awaitPing()
    })
    // A failed connection attempt, a lost connection or a refused ping.
    client.on('error', (err: Error) => { this.#become('down', err) })
    client.on('ping-interval', () => {
      this.#awaitPing()
      this.#judge()
    })
    client.connect().catch(() => {})
  }

  get state (): SubscriptionState {
    return this.#state
  }

  /** Calls `listener` with each message on `channel`, from whenever the store first answers. */
  subscribe (channel: string, listener: Listener): void {
    const wanted: Channel = { listener, state: 'missing' }
    this.#channels.set(channel, wanted)
    this.#ask(channel, wanted)
  }

  close (): void {
    this.#closed = true
    this.#cancelSilence?.()
    this.#client.destroy()
  }

  /** From now, the next ping's answer is awaited PINGS_MISSED intervals at most. */
  #awaitPing (): void {
    this.#cancelSilence?.()
    this.#cancelSilence = this.#clock.after(this.#silenceMs, () => {
      this.#become('down', new Error(`the store answered no ping for ${this.#silenceMs} ms`))
    })
  }

  #askMissing (): void {
    for (const [name, channel] of this.#channels) if (channel.state === 'missing') this.#ask(name, channel)
    this.#judge()
  }

  #ask (name: string, channel: Channel): void {
    channel.state = 'asked'
    this.#client.subscribe(name, channel.listener).then(() => {
      channel.state = 'held'
      this.#judge()
    }, (err: Error) => {
      // Refused (an ACL without the channel) or cut before its reply: asked again on the next 'ready'.
      channel.state = 'missing'
      this.#become('down', err)
    })
  }

  #judge (): void {
    if (this.#client.isReady && [...this.#channels.values()].every((channel) => channel.state === 'held')) this.#become('up')
  }

  #become (state: SubscriptionState, err?: Error): void {
    if (state === this.#state || this.#closed) return
    const previous = this.#state
    this.#state = state
    this.#observer?.sharedSubscriptionState(state)
    const fields = { store: this.#where, previous, error: err?.message }
    if (state === 'up') this.#log.info(fields, 'shared subscription up; this replica hears the pool\'s heads and built answers')
    else this.#log.warn(fields, 'shared subscription down; this replica hears no heads nor built answers until it is back')
  }
}
