import { epochStages, currentPhase, type EpochContext, type EpochStages } from './epoch-stages.js'

// The chain's events as GET /v1/events tells them (docs/waiting.md): at every height a head,
// then each epoch stage that begins there, then a new epoch if one begins there. Each event's
// id is its chain coordinates, `<height>` for the head and `<height>.<n>` for the n-th event
// after it: every replica gives the same event the same id, so any replica resumes a client
// from the id it last saw, by computing the events again from the chain.

export type ChainEventName = 'head' | 'stage' | 'epoch'

/** Where an event sits in the chain's order: its height, then its place among that height's events. */
export interface EventCursor {
  readonly height: number
  readonly n: number
}

export interface ChainEvent extends EventCursor {
  readonly event: ChainEventName
  readonly data: Readonly<Record<string, string | number>>
}

// The stage boundaries an event is sent for, in the order they come within an epoch.
const STAGES = ['poc_start', 'poc_generation_wind_down', 'poc_generation_end', 'poc_validation_start', 'poc_validation_wind_down',
  'poc_validation_end', 'set_new_validators', 'claim_money', 'inference_validation_cutoff'] as const satisfies ReadonlyArray<keyof EpochStages>

/** An event's id: its coordinates. */
export function eventId (cursor: EventCursor): string {
  return cursor.n === 0 ? String(cursor.height) : `${cursor.height}.${cursor.n}`
}

/** The coordinates an id names (Last-Event-ID, ?lastEventId); undefined when it names none. */
export function parseEventId (id: string): EventCursor | undefined {
  const match = /^(\d{1,15})(?:\.(\d{1,3}))?$/.exec(id)
  if (match === null) return undefined
  return { height: Number(match[1]), n: match[2] === undefined ? 0 : Number(match[2]) }
}

/** Whether `a` comes after `b` in the chain's order. */
export function isAfter (a: EventCursor, b: EventCursor): boolean {
  return a.height > b.height || (a.height === b.height && a.n > b.n)
}

/**
 * The events at `height`, in order, with the epochs placed by `anchor` (any epoch of the
 * chain's; the ones around `height` are counted from it by the epoch length, the params as
 * the anchor's). Only the head when the anchor places no epoch (none known, a zero length,
 * epoch 0, which runs no PoC).
 */
export function eventsAt (height: number, anchor: EpochContext | undefined): ChainEvent[] {
  const events: ChainEvent[] = [{ height, n: 0, event: 'head', data: { height } }]
  const epoch = anchor === undefined ? undefined : epochAt(anchor, BigInt(height))
  if (epoch === undefined) return events
  const h = BigInt(height)
  // Every stage of an epoch falls within it (inference_validation_cutoff counts back from the next start).
  const stages = epochStages(epoch)
  for (const stage of STAGES) {
    if (BigInt(stages[stage]) !== h) continue
    events.push({ height, n: events.length, event: 'stage', data: { height, epoch: Number(epoch.index), stage, phase: currentPhase(epoch, h) } })
  }
  if (epoch.pocStartBlockHeight === h) events.push({ height, n: events.length, event: 'epoch', data: { height, epoch: Number(epoch.index) } })
  return events
}

/** The epoch `height` is in, counted from `anchor` by its epoch length; undefined before epoch 1 or without a length. */
function epochAt (anchor: EpochContext, height: bigint): EpochContext | undefined {
  const length = anchor.params.epochLength
  if (length <= 0n || anchor.index === 0n) return undefined
  const offset = height - anchor.pocStartBlockHeight
  // Floor division: epochs before the anchor count down.
  const steps = offset >= 0n ? offset / length : -((-offset + length - 1n) / length)
  const index = anchor.index + steps
  if (index < 1n) return undefined
  return { index, pocStartBlockHeight: anchor.pocStartBlockHeight + steps * length, params: anchor.params }
}
