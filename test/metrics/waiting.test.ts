import t from 'tap'
import { Metrics } from '../../src/metrics/registry.js'

t.test('held requests, open streams, events sent and resumes, in the service\'s registry', async (t) => {
  const metrics = new Metrics()
  metrics.waiting.heldRequests(7)
  metrics.waiting.streamsOpen(3)
  metrics.waiting.eventSent('head')
  metrics.waiting.eventSent('head')
  metrics.waiting.streamResumed('reset')
  const text = await metrics.registry.metrics()
  t.match(text, /^edge_api_held_requests 7$/m)
  t.match(text, /^edge_api_event_streams_open 3$/m)
  t.match(text, /^edge_api_events_sent_total\{event="head"\} 2$/m)
  t.match(text, /^edge_api_events_sent_total\{event="epoch"\} 0$/m, 'each event from the start')
  t.match(text, /^edge_api_event_stream_resumes_total\{result="reset"\} 1$/m)
  t.match(text, /^edge_api_event_stream_resumes_total\{result="replayed"\} 0$/m)
})
