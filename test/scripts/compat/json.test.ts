import t from 'tap'
import { canonicalLines, keyPaths, parseJson, RawNumber } from '../../../scripts/compat/json.js'

t.test('numbers keep their exact text; keys are sorted; strings re-escaped alike', async (t) => {
  const a = parseJson('{"b":18446744073709551615,"a":[1,-2.5e3,{"y":true,"x":null}],"s":"\\u003c&\\n","e":{},"l":[]}')
  const b = parseJson(' { "s" : "<&\\n" , "a" : [ 1 , -2.5e3 , { "x" : null , "y" : true } ] , "b" : 18446744073709551615, "l": [ ], "e": { } } ')
  t.same(canonicalLines(a), canonicalLines(b), 'the same document however written')
  t.same(canonicalLines(a), [
    '{',
    '  "a": [',
    '    1,',
    '    -2.5e3,',
    '    {',
    '      "x": null,',
    '      "y": true',
    '    }',
    '  ],',
    '  "b": 18446744073709551615,',
    '  "e": {},',
    '  "l": [],',
    '  "s": "<&\\n"',
    '}'
  ])
  t.not(canonicalLines(parseJson('9223372036854775807')).join(), canonicalLines(parseJson('9223372036854775806')).join(),
    'integers beyond 2^53 that JSON.parse would round to the same double stay different')
  t.same(parseJson('false'), false)
  t.ok(parseJson('0') instanceof RawNumber)
})

t.test('anything that is not one JSON document is refused', async (t) => {
  for (const bad of ['', '{', '"unterminated', '{"a" 1}', '[1,]', '{"a":1,}', '01', 'nul', '"\\x"', '"a\u0001"', '{} {}', '<html>', '{a:1}', '[1 2]']) {
    t.throws(() => parseJson(bad), SyntaxError, JSON.stringify(bad))
  }
})

t.test('key paths: the shape of a document', async (t) => {
  t.same(keyPaths(parseJson('{"b":{"c":1},"a":[{"d":2},{"e":3}],"n":5}')), ['a', 'a[].d', 'a[].e', 'b', 'b.c', 'n'])
  t.same(keyPaths(parseJson('[1]')), [])
})
