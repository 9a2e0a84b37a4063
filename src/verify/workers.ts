import { createRequire } from 'node:module'
import type { Piscina } from 'piscina'
import type { PreparedBlock, VerifyBlockInput } from './block-input.js'
import { decodeOutcome, type Outcome } from './outcome.js'
import type { CommitOutcome, CommitTask, ProofTask } from './tasks.js'
import { NamedError } from '../named-error.js'

// The worker thread all of the verify routes' CPU work runs in (tasks.ts), so a commit's
// signatures (13-15 ms for 100 validators on an idle machine, far more on a busy one), a
// 28 MiB block body (~100 ms of JSON.parse) or a proof's hashing never hold the event loop
// that /readyz, /healthz and the Tier A reads share. Measured: `npm run bench -- --only=8`
// (BENCHMARKS.md).
//
// One thread for the whole process, started by the first task and stopped after 10 s without
// one (its heap goes with it); an idle thread does not keep the process alive. One thread
// leaves the other cores to the event loop; the routes' admission limit bounds how many
// tasks wait for it. The thread runs at nice +10 (Piscina's niceIncrement, through its
// optional @napi-rs/nice; without that package it runs at normal priority): when the CPU is
// contended, the event loop wins it about 9 to 1, so verification uses what the reads leave.
//
// Every task settles: its answer comes back as bytes (outcome.ts), and it has a time limit:
// past it (or when the request's signal aborts: the client left) Piscina terminates the
// thread, whatever the task is doing, and the next task starts a new one. The limit is the
// task's, not the thread's start: its clock starts once a thread has loaded its module (at
// nice +10 on a busy machine, or under tsx which compiles it first, a start took over the
// whole 5 s and the first commit check of `npm run demo` answered 503). A start has its own,
// wider limit, THREAD_START_LIMIT_MS.

// The worker module next to this one: .ts under the test runner and tsx, .js once built.
const WORKER = new URL(`./worker${import.meta.url.slice(import.meta.url.lastIndexOf('.'))}`, import.meta.url).href

/** CFS weights: nice 0 is 1024, nice 10 is 110. */
export const NICE_INCREMENT = 10

/**
 * The thread's heap: a 32 MiB body is a 32 MB string and its parse (~90 MB at most, mostly the
 * transactions' strings); beyond this the thread is stopped (ERR_WORKER_OUT_OF_MEMORY) instead
 * of the process growing. The body's bytes themselves are outside the heap.
 */
export const WORKER_RESOURCE_LIMITS = { maxOldGenerationSizeMb: 192, maxYoungGenerationSizeMb: 16 } as const

/** A task that ran out of time; its thread was terminated. */
export class TaskTimeLimitError extends NamedError {
  readonly timeLimitMs: number

  constructor (timeLimitMs: number) {
    super(`the task took longer than ${timeLimitMs} ms`)
    this.timeLimitMs = timeLimitMs
  }
}

export interface TaskOptions {
  readonly timeLimitMs: number
  /** Aborts the task (the client left); the task rejects with Piscina's AbortError. */
  readonly signal: AbortSignal
}

/** A thread that has not loaded its module by then is as good as stuck: its task ends as past its time limit. */
export const THREAD_START_LIMIT_MS = 30_000

let pool: Piscina | undefined
/** A thread has loaded the worker module and none has gone since (maxThreads is 1). */
let threadReady = false
/** Called when a thread is ready: the clocks of the tasks that waited for it. */
const onThreadReady = new Set<() => void>()

// Piscina is loaded by the first task, not at start: the verify routes are off by default,
// and loading it is about 25 ms of every start's CPU (docs/performance.md). Its CommonJS
// entry, the one its ESM wrapper re-exports.
const load = createRequire(import.meta.url)

/** The process's pool, started on first use (exported for the tests, which check its error handling). */
export function workers (): Piscina {
  if (pool === undefined) {
    const { Piscina: Pool } = load('piscina') as typeof import('piscina')
    pool = new Pool({
      filename: WORKER,
      minThreads: 0,
      maxThreads: 1,
      idleTimeout: 10_000,
      niceIncrement: NICE_INCREMENT,
      resourceLimits: WORKER_RESOURCE_LIMITS
    })
    // A thread that fails with tasks in flight fails those tasks (their requests answer 500 and
    // log it); one that fails idle takes nothing with it, and the next task starts a new one.
    // Without a listener, Node would treat the event as an uncaught exception and exit.
    pool.on('error', () => {})
    pool.on('workerCreate', () => {
      threadReady = true
      for (const start of onThreadReady) start()
      onThreadReady.clear()
    })
    pool.on('workerDestroy', () => { threadReady = false })
  }
  return pool
}

/** Parses a verify-block body in the worker. The bytes are moved there, not copied, when they can be. */
export async function parseBlockBodyInWorker (body: Uint8Array, options: TaskOptions): Promise<Outcome<unknown>> {
  // Buffer.concat gives a large body its own ArrayBuffer, so it can be transferred whole;
  // a view into a shared one is copied first (transferring would detach the others).
  const bytes = body.byteOffset === 0 && body.byteLength === body.buffer.byteLength ? body : new Uint8Array(body)
  return await run('parseBlockBody', bytes, options, [bytes.buffer as ArrayBuffer])
}

export async function prepareBlockInWorker (input: VerifyBlockInput, options: TaskOptions): Promise<Outcome<PreparedBlock>> {
  return await run('prepareBlock', input, options)
}

/** Checks a commit's signatures in the worker. */
export async function checkCommitInWorker (task: CommitTask, options: TaskOptions): Promise<CommitOutcome> {
  return await run('checkCommit', task, options)
}

export async function verifyProofInWorker (task: ProofTask, options: TaskOptions): Promise<Outcome> {
  return await run('verifyProof', task, options)
}

async function run<T extends Outcome<unknown>> (name: string, input: unknown, options: TaskOptions, transferList?: ArrayBuffer[]): Promise<T> {
  const pool = workers()
  const timeLimit = new AbortController()
  let timer = setTimeout(() => { timeLimit.abort() }, threadReady ? options.timeLimitMs : THREAD_START_LIMIT_MS)
  const startClock = (): void => {
    clearTimeout(timer)
    timer = setTimeout(() => { timeLimit.abort() }, options.timeLimitMs)
  }
  if (!threadReady) onThreadReady.add(startClock)
  const signal = AbortSignal.any([options.signal, timeLimit.signal])
  let answer: Uint8Array
  try {
    answer = await pool.run(input, { name, signal, transferList }) as Uint8Array
  } catch (err) {
    if (timeLimit.signal.aborted && !options.signal.aborted) throw new TaskTimeLimitError(options.timeLimitMs)
    throw err
  } finally {
    clearTimeout(timer)
    onThreadReady.delete(startClock)
  }
  return decodeOutcome(answer) as T
}
