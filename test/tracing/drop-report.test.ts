import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { DropReport, type DropReason } from '../../src/tracing/drop-report.js'

t.test('every loss is counted at once; the log says so at the first loss, then once per interval with the sums', async (t) => {
  const lines: Array<Record<string, unknown>> = []
  const counted: Array<[DropReason, number]> = []
  const report = new DropReport({ warn: (fields, msg) => lines.push({ ...fields, msg }) }, (reason, spans) => counted.push([reason, spans]), 50)
  report.flush()
  t.same(lines, [], 'nothing to say before a loss')
  report.dropped('queue_full', 1)
  report.dropped('queue_full', 1)
  report.dropped('export_failed', 10, new Error('connect ECONNREFUSED 127.0.0.1:4318'))
  t.same(counted, [['queue_full', 1], ['queue_full', 1], ['export_failed', 10]])
  t.same(lines, [{ queueFull: 1, exportFailed: 0, error: undefined, msg: 'trace spans dropped' }], 'the first loss, at once')
  await sleep(120)
  t.same(lines[1], { queueFull: 1, exportFailed: 10, error: 'connect ECONNREFUSED 127.0.0.1:4318', msg: 'trace spans dropped' }, 'the rest of the interval, summed')
  report.dropped('queue_full', 3)
  report.dropped('queue_full', 2)
  report.close()
  t.same(lines.slice(2), [{ queueFull: 3, exportFailed: 0, error: undefined, msg: 'trace spans dropped' }, { queueFull: 2, exportFailed: 0, error: undefined, msg: 'trace spans dropped' }], 'a new period logs its first loss; close() the rest')
  t.equal(lines.length, 4)
})

t.test('without a counter (metrics off) the log still says it', async (t) => {
  const lines: string[] = []
  const report = new DropReport({ warn: (_fields, msg) => lines.push(msg) })
  report.dropped('queue_full', 1)
  report.close()
  t.same(lines, ['trace spans dropped'])
})
