import t from 'tap'
import { formatDuration, parseDuration } from '../src/duration.js'

t.test('parses Go durations into milliseconds', async (t) => {
  const cases: Array<[string, number]> = [
    ['0', 0], ['250ms', 250], ['5s', 5000], ['2m', 120_000], ['1m30s', 90_000], ['1h', 3_600_000],
    ['1.5s', 1500], ['.5s', 500], ['1500us', 1.5], ['1500µs', 1.5], ['2000000ns', 2], ['+3s', 3000], ['-1s', -1000],
    ['0s', 0], ['1h2m3s4ms', 3_723_004]
  ]
  for (const [text, ms] of cases) t.equal(parseDuration(text), ms, text)
})

t.test('refuses what Go refuses', async (t) => {
  for (const text of ['', '5', '-', '1x', 's', '5 s', '1m30', 'forever', '1.2.3s', '00']) {
    t.equal(parseDuration(text), undefined, JSON.stringify(text))
  }
})

t.test('formats milliseconds the way an operator writes them', async (t) => {
  const cases: Array<[number, string]> = [[0, '0s'], [250, '250ms'], [5000, '5s'], [120_000, '2m'], [90_000, '1m30s'], [3_723_004, '1h2m3s4ms']]
  for (const [ms, text] of cases) t.equal(formatDuration(ms), text, text)
})
