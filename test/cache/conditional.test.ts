import t from 'tap'
import { BodyTags, matchesTag, tagOf } from '../../src/cache/conditional.js'

// The ETag and If-None-Match (RFC 9110 §13.1.2); the 304s they give run over the app in
// answer-cache.test.ts.

t.test('If-None-Match matches any listed tag, weak or not, or "*"', async (t) => {
  const etag = tagOf('/v1/participants  @5')
  t.match(etag, /^"[\w-]{16}"$/)
  t.equal(tagOf('/v1/participants  @5'), etag, 'the same key, the same tag, on any replica')
  t.not(tagOf('/v1/participants  @6'), etag)
  t.ok(matchesTag(etag, etag))
  t.ok(matchesTag(`"a", W/${etag}`, etag))
  t.ok(matchesTag('*', etag))
  t.notOk(matchesTag('"a", "b"', etag))
  t.notOk(matchesTag(undefined, etag))
})

t.test('a body\'s tag is its digest; the last one is remembered', async (t) => {
  const tags = new BodyTags()
  const a = tags.tagOf('{"status":"ok"}')
  t.equal(tags.tagOf('{"status":"ok"}'), a)
  t.not(tags.tagOf('{"status":"other"}'), a)
  t.equal(tags.tagOf('{"status":"ok"}'), a)
})
