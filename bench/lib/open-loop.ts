// An open-loop load generator: requests go out on a fixed schedule whatever the server does,
// as independent clients (or a router in front of many) send them. autocannon is closed-loop
// (each connection waits for its answer before it sends the next), and its `overallRate`
// sends each connection's share back to back at the start of every second: neither can offer
// 2× a server's capacity. Here a request that falls due goes out at once on an idle
// keep-alive connection, one request at a time per connection as a router sends them to a
// backend; only when all `connections` are busy does it wait in the generator. Latency is
// counted from the moment the request was due (no coordinated omission: time spent waiting
// for a connection is time spent waiting for the server). Without a rate, the same
// connections run closed loop (each sends its next request as soon as it has its answer):
// the server's capacity under that many concurrent clients.
//
// Raw sockets and a minimal response parser (status line, Content-Length, body skipped)
// rather than an HTTP client: at tens of thousands of requests per second the generator
// shares two cores with the server it measures, so it must cost far less per request than
// the server does. It expects what Fastify sends: every response has a Content-Length.
import { once } from 'node:events'
import { connect, type Socket } from 'node:net'
import { percentile } from './stats.js'

export interface OpenLoopOptions {
  /** Origin, e.g. http://127.0.0.1:8080. */
  readonly origin: string
  /** Paths sent in turn. */
  readonly paths: readonly string[]
  /** Requests per second, spread evenly; 0 for closed loop. */
  readonly rate: number
  readonly durationS: number
  /** Keep-alive connections, opened before the run (default 1000); when all are busy, requests wait in the generator. */
  readonly connections?: number
  /** How long after the last scheduled request answers are still awaited; the rest count as unanswered. */
  readonly graceMs?: number
  /**
   * A label per path (same length as `paths`): the result gives the 2xx latency of each
   * label's paths apart, measured in the same run (e.g. two kinds of request interleaved, so
   * both see the same machine).
   */
  readonly groups?: readonly string[]
}

export interface GroupLatency {
  readonly ok: number
  readonly p50: number
  readonly p99: number
}

export interface OpenLoopResult {
  /** Requests scheduled (closed loop: sent) per second. */
  readonly offered: number
  readonly scheduled: number
  /**
   * Requests written to a socket before the schedule ended, per second of the schedule: below
   * `offered` when every connection was busy and requests waited in the generator (their
   * latency still counts from when they were due).
   */
  readonly sentDuringSchedule: number
  readonly statusCodes: Record<string, number>
  /** 2xx answers per second of the schedule. */
  readonly goodput: number
  /** Share of the scheduled requests answered 503. */
  readonly shed: number
  /** Requests not answered within the grace period, or lost with a connection. */
  readonly unanswered: number
  /** Latency of the 2xx answers, ms from the moment each was due. */
  readonly p50: number
  readonly p99: number
  /** Latency of the 503 answers, p99 ms. */
  readonly shedP99: number
  /** Connections open at the end (at most `connections`). */
  readonly connectionsUsed: number
  /** How late the generator's own timer sent requests, p99 ms: a large figure means the generator was short of CPU. */
  readonly sendLagP99: number
  readonly durationS: number
  /** Per label of `groups`, when given. */
  readonly groups?: Record<string, GroupLatency>
}

const HEADER_END = '\r\n\r\n'

type OnAnswer = (connection: Connection, status: number, due: number, index: number) => void

/** One keep-alive connection carrying one request at a time. */
class Connection {
  readonly socket: Socket
  /** When the request in flight was due; NaN when idle. */
  due = Number.NaN
  /** Which of the run's requests is in flight (its number in the schedule). */
  index = -1
  onAnswer: OnAnswer = () => {}
  #text = ''
  // Body bytes of the current answer still to skip.
  #skip = 0

  constructor (socket: Socket) {
    this.socket = socket
    socket.setNoDelay(true)
    socket.setEncoding('latin1')
    socket.on('data', (chunk: string) => this.#read(chunk))
  }

  get busy (): boolean {
    return !Number.isNaN(this.due)
  }

  /** Closed, or closing: never sent on again. */
  get dead (): boolean {
    return this.socket.destroyed || this.socket.readableEnded
  }

  send (request: string, due: number, index: number): void {
    this.due = due
    this.index = index
    this.socket.write(request, 'latin1')
  }

  #read (chunk: string): void {
    // Bytes with no request in flight are the server giving up on the connection: Node answers
    // 408 to one that has sent nothing for its headersTimeout (edge-api's 15 s), which a
    // connection kept idle since it was opened does, then closes it. A real client drops such
    // a connection (undici does); taken for the answer to the next request, it would count a
    // 408 that was never that request's and lose the request.
    if (!this.busy) {
      this.socket.destroy()
      return
    }
    let text = this.#text + chunk
    if (this.#skip > 0) {
      const n = Math.min(this.#skip, text.length)
      this.#skip -= n
      text = text.slice(n)
      if (this.#skip > 0) return
    }
    const end = text.indexOf(HEADER_END)
    if (end === -1) {
      this.#text = text
      return
    }
    // "HTTP/1.1 200 OK\r\n…"
    const status = Number(text.slice(9, 12))
    const head = text.slice(0, end).toLowerCase()
    const at = head.indexOf('\r\ncontent-length:')
    const lineEnd = head.indexOf('\r\n', at + 2)
    const length = at === -1 ? 0 : Number.parseInt(head.slice(at + 17, lineEnd === -1 ? undefined : lineEnd), 10)
    const rest = text.length - end - HEADER_END.length
    this.#skip = Math.max(0, length - rest)
    this.#text = ''
    const due = this.due
    this.due = Number.NaN
    this.onAnswer(this, status, due, this.index)
  }
}

/** Idle connections kept between runs, per origin: opening thousands per run would exhaust the ephemeral ports (TIME_WAIT). */
const idle = new Map<string, Connection[]>()

async function open (url: URL): Promise<Connection> {
  const socket = connect(Number(url.port), url.hostname)
  await once(socket, 'connect')
  const connection = new Connection(socket)
  // A connection that fails or that the server closes is dropped; its request, if any, stays unanswered.
  socket.on('error', () => {})
  socket.on('close', () => {
    const list = idle.get(url.origin) ?? []
    const i = list.indexOf(connection)
    if (i !== -1) list.splice(i, 1)
  })
  return connection
}

export async function openLoop (options: OpenLoopOptions): Promise<OpenLoopResult> {
  const { origin, paths, rate, durationS } = options
  const closed = !(rate > 0)
  const graceMs = options.graceMs ?? 3000
  const url = new URL(origin)
  const requests = paths.map((path) => `GET ${path} HTTP/1.1\r\nHost: ${url.host}\r\nConnection: keep-alive\r\n\r\n`)
  // Closed loop: as many as the connections can carry in the time (grown when needed).
  let total = closed ? 1 << 16 : Math.max(1, Math.round(rate * durationS))
  const interval = closed ? 0 : 1000 / rate
  let okLatency: Float64Array = new Float64Array(total)
  let shedLatency: Float64Array = new Float64Array(total)
  const sendLag = new Float64Array(closed ? 0 : total)
  const statusCodes: Record<string, number> = {}
  let ok = 0
  let shed = 0
  let answered = 0
  let sent = 0
  let allAnswered = (): void => {}
  const finished = new Promise<void>((resolve) => { allAnswered = resolve })

  // Connections are opened before the run, so it never measures connection set-up.
  const kept = idle.get(url.origin) ?? []
  idle.set(url.origin, kept)
  const count = options.connections ?? 1000
  const free = kept.splice(0, count).filter((c) => !c.dead)
  while (free.length < count) free.push(await open(url))
  const all = [...free]
  // Requests due while every connection is busy: [index, due].
  const waiting: Array<[number, number]> = []
  let waitingHead = 0
  const start = performance.now()
  const end = start + durationS * 1000
  // The most recently used idle connection that is still open: the server may have closed the
  // others (its keep-alive timeout, the 408 above) while they waited.
  const idleConnection = (): Connection | undefined => {
    let connection = free.pop()
    while (connection?.dead === true) connection = free.pop()
    return connection
  }
  const release = (connection: Connection): void => {
    if (connection.dead) return
    if (closed) {
      const now = performance.now()
      if (now < end) {
        if (sent === total) {
          total *= 2
          okLatency = grow(okLatency, total)
          shedLatency = grow(shedLatency, total)
        }
        connection.send(requests[sent % requests.length] as string, now, sent)
        sent++
      } else {
        free.push(connection)
        if (free.length === all.filter((c) => !c.dead).length) allAnswered()
      }
    } else if (waitingHead < waiting.length) {
      const [index, due] = waiting[waitingHead++] as [number, number]
      connection.send(requests[index % requests.length] as string, due, index)
    } else {
      free.push(connection)
    }
  }
  const labels = options.groups
  const byGroup = new Map<string, number[]>((labels ?? []).map((label) => [label, []]))
  const onAnswer: OnAnswer = (connection, status, due, index) => {
    const latency = performance.now() - due
    if (labels !== undefined && status >= 200 && status < 300) byGroup.get(labels[index % labels.length] as string)?.push(latency)
    statusCodes[status] = (statusCodes[status] ?? 0) + 1
    if (status >= 200 && status < 300) okLatency[ok++] = latency
    else if (status === 503) shedLatency[shed++] = latency
    answered++
    release(connection)
    if (!closed && answered === total) allAnswered()
  }
  for (const c of all) c.onAnswer = onAnswer

  if (closed) {
    for (const c of free.splice(0)) release(c)
    await new Promise((resolve) => setTimeout(resolve, durationS * 1000))
  } else {
    // A 1 ms timer sends every request that has fallen due since the last tick: the schedule
    // is kept even when the generator's own event loop is late.
    await new Promise<void>((resolve) => {
      const tick = (): void => {
        const now = performance.now()
        const due = Math.min(total, Math.floor((now - start) / interval) + 1)
        while (sent < due) {
          const at = start + sent * interval
          sendLag[sent] = now - at
          const connection = idleConnection()
          if (connection !== undefined) connection.send(requests[sent % requests.length] as string, at, sent)
          else waiting.push([sent, at])
          sent++
        }
        if (sent < total) setTimeout(tick, 1)
        else resolve()
      }
      tick()
    })
  }
  const scheduleS = (performance.now() - start) / 1000
  const writtenBySchedule = closed ? sent : sent - (waiting.length - waitingHead)
  let timer: NodeJS.Timeout | undefined
  await Promise.race([finished, new Promise((resolve) => { timer = setTimeout(resolve, graceMs) })])
  clearTimeout(timer)
  // Connections still waiting for an answer are closed; idle ones are kept for the next run.
  for (const c of all) {
    c.onAnswer = () => {}
    if (c.busy) c.socket.destroy()
    else if (!c.socket.destroyed) kept.push(c)
  }
  const scheduled = closed ? sent : total
  const okSorted = okLatency.subarray(0, ok).sort()
  return {
    offered: scheduled / scheduleS,
    scheduled,
    sentDuringSchedule: writtenBySchedule / scheduleS,
    statusCodes,
    goodput: ok / scheduleS,
    shed: shed / scheduled,
    unanswered: scheduled - answered,
    p50: percentile(okSorted, 50),
    p99: percentile(okSorted, 99),
    shedP99: percentile(shedLatency.subarray(0, shed).sort(), 99),
    connectionsUsed: all.length,
    sendLagP99: percentile(sendLag.subarray(0, sent).sort(), 99),
    durationS: scheduleS,
    ...(labels === undefined ? {} : { groups: groupLatency(byGroup) })
  }
}

function groupLatency (byGroup: ReadonlyMap<string, number[]>): Record<string, GroupLatency> {
  const out: Record<string, GroupLatency> = {}
  for (const [label, latencies] of byGroup) {
    const sorted = Float64Array.from(latencies).sort()
    out[label] = { ok: sorted.length, p50: percentile(sorted, 50), p99: percentile(sorted, 99) }
  }
  return out
}

function grow (array: Float64Array, length: number): Float64Array {
  const bigger = new Float64Array(length)
  bigger.set(array)
  return bigger
}
