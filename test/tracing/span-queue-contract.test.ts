import t from 'tap'
import { DropReport } from '../../src/tracing/drop-report.js'
import { SpanQueue, type SpanExporter } from '../../src/tracing/span-queue.js'
import { ServerSpanRecord, SpanContext, type SpanRecord } from '../../src/tracing/span-records.js'

// The batch queue's contract, in process, with an exporter that records what it is handed:
// OTEL_BSP_* as the SDK's BatchSpanProcessor applies them (a full batch at once, the rest after
// the delay, one export at a time, a bounded queue whose losses are counted, a flush that sends
// everything at once, nothing queued after shutdown).

const context = new SpanContext('4bf92f3577b34da6a3ce929d0e0e4736', 'b7ad6b7169203331', '', '', true)
const span = (name: string): ServerSpanRecord => new ServerSpanRecord(context, 'GET', name, name, 'http', name, 1, 2, 200, false)

interface Recorder {
  readonly queue: SpanQueue
  readonly batches: string[][]
  readonly drops: Record<string, number>
  /** Answers the exports held so far (hold: true), in order. */
  release (): void
}

function queueWith (options: { maxQueueSize?: number, maxExportBatchSize?: number, scheduleDelayMs?: number, exportTimeoutMs?: number, hold?: boolean, fail?: boolean } = {}): Recorder {
  const batches: string[][] = []
  const held: Array<() => void> = []
  const exporter: SpanExporter = {
    export: (spans: SpanRecord[], done) => {
      batches.push(spans.map((s) => (s as ServerSpanRecord).route as string))
      const answer = () => done(options.fail === true ? { code: 1, error: new Error('refused') } : { code: 0 })
      if (options.hold === true) held.push(answer)
      else answer()
    },
    shutdown: async () => {}
  }
  const drops: Record<string, number> = {}
  const report = new DropReport({ warn: () => {} }, (reason, n) => { drops[reason] = (drops[reason] ?? 0) + n })
  const queue = new SpanQueue({
    exporter,
    maxQueueSize: options.maxQueueSize ?? 10,
    maxExportBatchSize: options.maxExportBatchSize ?? 10,
    // A scheduled export a minute away unless a case says otherwise: only what the case does sends anything.
    scheduleDelayMs: options.scheduleDelayMs ?? 60_000,
    exportTimeoutMs: options.exportTimeoutMs ?? 60_000,
    drops: report
  })
  return { queue, batches, drops, release: () => { for (const answer of held.splice(0)) answer() } }
}

const tick = async (ms = 0): Promise<void> => await new Promise((resolve) => setTimeout(resolve, ms))

t.test('a forced flush exports what is queued at once, a batch per export', async (t) => {
  const { queue, batches } = queueWith({ maxExportBatchSize: 2 })
  t.teardown(() => queue.shutdown())
  for (const name of ['a', 'b', 'c']) queue.add(span(name))
  // A full batch leaves after the current tick: not on the request's path.
  t.equal(queue.queued, 3)
  t.same(batches, [], 'nothing sent synchronously')
  await queue.forceFlush()
  t.same(batches.flat().toSorted(), ['a', 'b', 'c'])
  t.ok(batches.every((b) => b.length <= 2), 'no batch above maxExportBatchSize')
  t.equal(queue.queued, 0)
})

t.test('a full batch goes out at once; the rest waits for the schedule delay', async (t) => {
  const { queue, batches } = queueWith({ maxQueueSize: 20, maxExportBatchSize: 3, scheduleDelayMs: 100 })
  t.teardown(() => queue.shutdown())
  for (const name of ['a', 'b', 'c', 'd']) queue.add(span(name))
  await tick()
  t.same(batches, [['a', 'b', 'c']], 'the full batch, after the tick')
  t.equal(queue.queued, 1)
  await tick(20)
  t.same(batches.length, 1, 'the remainder waits')
  await tick(150)
  t.same(batches, [['a', 'b', 'c'], ['d']], 'and goes after the delay')
})

t.test('one export at a time: the next waits for the answer, or for OTEL_BSP_EXPORT_TIMEOUT', async (t) => {
  const { queue, batches, release } = queueWith({ maxQueueSize: 20, maxExportBatchSize: 2, exportTimeoutMs: 100, hold: true })
  for (const name of ['a', 'b', 'c', 'd', 'e', 'f']) queue.add(span(name))
  await tick(10)
  t.same(batches, [['a', 'b']], 'one in flight')
  release()
  await tick(10)
  t.same(batches, [['a', 'b'], ['c', 'd']], 'the next once it was answered')
  await tick(150)
  t.same(batches, [['a', 'b'], ['c', 'd'], ['e', 'f']], 'and the one after once the unanswered one timed out')
  release()
  await queue.shutdown()
})

t.test('a full queue drops, counted; a failed export is counted; nothing is queued after shutdown', async (t) => {
  const full = queueWith({ maxQueueSize: 3, maxExportBatchSize: 3, hold: true })
  for (const name of ['a', 'b', 'c']) full.queue.add(span(name))
  await tick()
  // The first batch is held; three more fill the queue again, two beyond are dropped.
  for (const name of ['d', 'e', 'f', 'g', 'h']) full.queue.add(span(name))
  t.equal(full.queue.queued, 3, 'the queue at its bound')
  t.same(full.drops, { queue_full: 2 })
  full.release()
  const flushing = full.queue.shutdown()
  await tick()
  full.release()
  await flushing
  full.queue.add(span('late'))
  t.equal(full.queue.queued, 0, 'ignored after shutdown')
  t.same(full.batches, [['a', 'b', 'c'], ['d', 'e', 'f']])
  t.equal(full.queue.shutdown(), flushing, 'shutdown runs once')

  t.equal(await flushing, true, 'the flush\'s exports succeeded')

  const failing = queueWith({ fail: true })
  for (const name of ['a', 'b']) failing.queue.add(span(name))
  t.equal(await failing.queue.shutdown(), false, 'a flush whose export failed did not complete')
  t.same(failing.drops, { export_failed: 2 })
  const hanging = queueWith({ exportTimeoutMs: 50, hold: true })
  hanging.queue.add(span('a'))
  t.equal(await hanging.queue.forceFlush(), false, 'nor one whose export timed out')
  hanging.release()
})
