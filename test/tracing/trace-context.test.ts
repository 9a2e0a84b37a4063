import t from 'tap'
import { cleanTraceState, extractTraceParent, traceparentOf } from '../../src/tracing/trace-context.js'

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736'
const SPAN = '00f067aa0ba902b7'

t.test('traceparent: version 00 exactly, a later version\'s first four fields, never ff or all-zero ids', async (t) => {
  t.same(extractTraceParent({ traceparent: `00-${TRACE}-${SPAN}-01` }), { traceId: TRACE, spanId: SPAN, sampled: true, traceState: '' })
  t.same(extractTraceParent({ traceparent: `00-${TRACE}-${SPAN}-00` })?.sampled, false)
  t.same(extractTraceParent({ traceparent: `00-${TRACE}-${SPAN}-03` })?.sampled, true, 'the sampled bit, other flags aside')
  t.same(extractTraceParent({ traceparent: `cc-${TRACE}-${SPAN}-01-future` })?.spanId, SPAN, 'a later version with more fields')
  t.same(extractTraceParent({ traceparent: [`00-${TRACE}-${SPAN}-01`, `00-${'1'.repeat(32)}-${SPAN}-01`] })?.traceId, TRACE, 'the first of a repeated header')
  t.equal(extractTraceParent({ traceparent: [] }), undefined, 'a repeated header with no value: none')
  for (const bad of [`00-${TRACE}-${SPAN}-01-extra`, `ff-${TRACE}-${SPAN}-01`, `00-${'0'.repeat(32)}-${SPAN}-01`, `00-${TRACE}-${'0'.repeat(16)}-01`,
    `00-${TRACE.toUpperCase()}-${SPAN}-01`, `00-${TRACE}-${SPAN}`, 'garbage', '']) {
    t.equal(extractTraceParent({ traceparent: bad }), undefined, `refused: ${JSON.stringify(bad)}`)
  }
  t.equal(extractTraceParent({}), undefined, 'none')
  t.equal(extractTraceParent({ tracestate: 'a=b' }), undefined, 'a tracestate alone is no parent')
  t.equal(traceparentOf(TRACE, SPAN, true), `00-${TRACE}-${SPAN}-01`)
  t.equal(traceparentOf(TRACE, SPAN, false), `00-${TRACE}-${SPAN}-00`)
})

t.test('tracestate: carried with the parent, its invalid members left out, in order, at most 32', async (t) => {
  t.equal(extractTraceParent({ traceparent: `00-${TRACE}-${SPAN}-01`, tracestate: 'congo=t61rcWkgMzE, rojo=00f067aa0ba902b7' })?.traceState, 'congo=t61rcWkgMzE,rojo=00f067aa0ba902b7')
  t.equal(extractTraceParent({ traceparent: `00-${TRACE}-${SPAN}-01`, tracestate: ['a=1', 'b=2'] })?.traceState, 'a=1,b=2', 'repeated headers joined')
  t.equal(cleanTraceState('a=1,BAD=2,novalue,c=,d=x=y,tenant@vendor=ok,e=3'), 'a=1,tenant@vendor=ok,e=3')
  t.equal(cleanTraceState('a=1,b=2,a=3'), 'a=3,b=2', 'a repeated key keeps its first place and its last value')
  const many = Array.from({ length: 40 }, (_, i) => `k${i}=v`).join(',')
  t.equal(cleanTraceState(many).split(',').length, 32)
  t.ok(cleanTraceState(Array.from({ length: 30 }, (_, i) => `k${i}=${'v'.repeat(30)}`).join(',')).length <= 512, 'at most 512 characters')
  t.equal(cleanTraceState(''), '')
})
