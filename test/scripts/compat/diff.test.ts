import t from 'tap'
import { lineDiff } from '../../../scripts/compat/diff.js'

t.test('only the changed lines, "-" from the first and "+" from the second', async (t) => {
  t.same(lineDiff(['{', '  "a": 1,', '  "b": 2', '}'], ['{', '  "a": "1",', '  "b": 2', '}']), ['-   "a": 1,', '+   "a": "1",'])
  t.same(lineDiff(['a', 'b', 'c'], ['a', 'b', 'c']), [])
  t.same(lineDiff(['a', 'x', 'b', 'c'], ['a', 'b', 'y', 'c']), ['- x', '+ y'])
  t.same(lineDiff([], ['a']), ['+ a'])
  t.same(lineDiff(['a'], []), ['- a'])
  t.same(lineDiff(['x', 'y', 'z'], ['q', 'y']), ['- x', '+ q', '- z'])
  t.same(lineDiff(['k', 'x', 'y'], ['k', 'y', 'x']), ['- x', '+ x'], 'a tie keeps the first server\'s line first')
})

t.test('a huge changed region is shown whole instead of building the LCS table', async (t) => {
  const a = Array.from({ length: 2100 }, (_, i) => `a${i}`)
  const b = Array.from({ length: 2100 }, (_, i) => `b${i}`)
  const diff = lineDiff(a, b)
  t.equal(diff.length, 4200)
  t.equal(diff[0], '- a0')
  t.equal(diff[2100], '+ b0')
})
