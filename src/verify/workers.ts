import { Piscina } from 'piscina'
import type { CommitTask, Outcome } from './worker.js'

// The worker thread the verify routes' CPU work runs in (tasks in worker.ts), so a commit's
// signatures (13-15 ms for 100 validators on an idle machine, far more on a busy one) or a
// 28 MiB block body (~100 ms of JSON.parse) never hold the event loop that /readyz, /healthz
// and the Tier A reads share. Measured: `npm run bench -- --only=8` (BENCHMARKS.md).
//
// One thread for the whole process, started by the first task and stopped after a minute
// without one; an idle thread does not keep the process alive. One thread leaves the other
// cores to the event loop; the routes' admission limit bounds how many tasks wait for it.
// The thread runs at nice +10 (Piscina's niceIncrement, through its optional @napi-rs/nice;
// without that package it runs at normal priority): when the CPU is contended, the event
// loop wins it about 9 to 1, so verification uses what the reads leave, not the reverse.

// The worker module next to this one: .ts under the test runner, .js once built.
const WORKER = new URL(`./worker${import.meta.url.slice(import.meta.url.lastIndexOf('.'))}`, import.meta.url).href

/** CFS weights: nice 0 is 1024, nice 10 is 110. */
export const NICE_INCREMENT = 10

let pool: Piscina | undefined

/** The process's pool, started on first use (exported for the tests, which check its error handling). */
export function workers (): Piscina {
  if (pool === undefined) {
    pool = new Piscina({ filename: WORKER, minThreads: 0, maxThreads: 1, idleTimeout: 60_000, niceIncrement: NICE_INCREMENT })
    // A thread that fails with tasks in flight fails those tasks (their requests answer 500 and
    // log it); one that fails idle takes nothing with it, and the next task starts a new one.
    // Without a listener, Node would treat the event as an uncaught exception and exit.
    pool.on('error', () => {})
  }
  return pool
}

/** Parses a verify-block body in the worker. The bytes are moved there, not copied, when they can be. */
export async function parseBlockBodyInWorker (body: Uint8Array): Promise<Outcome<unknown>> {
  // Buffer.concat gives a large body its own ArrayBuffer, so it can be transferred whole;
  // a view into a shared one is copied first (transferring would detach the others).
  const bytes = body.byteOffset === 0 && body.byteLength === body.buffer.byteLength ? body : new Uint8Array(body)
  return await workers().run(bytes, { name: 'parseBlockBody', transferList: [bytes.buffer as ArrayBuffer] }) as Outcome<unknown>
}

/** Checks a commit's signatures in the worker. */
export async function checkCommitInWorker (task: CommitTask): Promise<Outcome> {
  return await workers().run(task, { name: 'checkCommit' }) as Outcome
}
