import t, { type Test } from 'tap'
import Fastify from 'fastify'
import { BLOCK_HEIGHT_HEADER, BodyTags, holdsAnswer, matchesTag, tagAnswer, tagOf } from '../../src/cache/conditional.js'

// The ETag and If-None-Match (RFC 9110 §13.1.2); the 304s they give run over the app in
// answer-cache.test.ts.

t.test('If-None-Match matches any listed tag, weak or not, or "*"', async (t) => {
  const etag = tagOf('/v1/participants  @5')
  t.match(etag, /^"5-[\w-]{16}"$/, 'the tag names its height')
  t.match(tagOf('/v1/params'), /^"[\w-]{16}"$/, 'a key of no height: none named')
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

t.test('a tag with W/ inside its quotes is another tag, not the weak form of this one', async (t) => {
  const etag = tagOf('/v1/models  @9')
  t.notOk(matchesTag(`"W/${etag.slice(1)}`, etag), 'only a leading W/ marks a weak tag')
  t.ok(matchesTag(` W/${etag} `, etag), 'spaces around a listed tag do not count')
})

/** A bare app whose GET routes are tagged as http-cache.ts tags answers without a cache key. */
async function taggedApp (t: Test) {
  const app = Fastify()
  t.teardown(async () => app.close())
  const tags = new BodyTags()
  app.addHook('onSend', async (request, reply, payload) => tags.tagged(request, reply, payload, 'max-age=1'))
  app.get('/status', async () => ({ status: 'ok' }))
  app.post('/status', async () => ({ status: 'ok' }))
  app.get('/missing', async (_request, reply) => reply.code(404).send({ error: 'none' }))
  app.get('/keyed', async (_request, reply) => {
    const etag = tagOf('keyed')
    tagAnswer(reply, 42, etag)
    return { keyed: true }
  })
  app.get('/unpinned', async (_request, reply) => {
    tagAnswer(reply, undefined, tagOf('unpinned'))
    return { unpinned: true }
  })
  app.get('/empty', async (_request, reply) => reply.type('text/plain').send(''))
  app.get('/holds', async (request) => ({ holds: holdsAnswer(request, tagOf('holds')) }))
  return app
}

t.test('a GET 200 gets its body\'s tag and cache-control, and a 304 without bytes when the client holds it', async (t) => {
  const app = await taggedApp(t)
  const first = await app.inject('/status')
  t.equal(first.statusCode, 200)
  t.match(first.headers.etag, /^"[\w-]{16}"$/)
  t.equal(first.headers['cache-control'], 'max-age=1')
  const again = await app.inject({ url: '/status', headers: { 'if-none-match': String(first.headers.etag) } })
  t.equal(again.statusCode, 304, 'the same tag: not modified')
  t.equal(again.body, '', 'no bytes')
  t.equal(again.headers.etag, first.headers.etag)
  const other = await app.inject({ url: '/status', headers: { 'if-none-match': '"another"' } })
  t.equal(other.statusCode, 200, 'another tag: the answer')
  t.equal(other.body, first.body)
})

t.test('only GET 200s without a tag of their own are tagged by body', async (t) => {
  const app = await taggedApp(t)
  const tag = String((await app.inject('/status')).headers.etag)
  const post = await app.inject({ method: 'POST', url: '/status', headers: { 'if-none-match': tag } })
  t.equal(post.statusCode, 200, 'a POST is never a 304')
  t.equal(post.headers.etag, undefined, 'nor tagged')
  const missing = await app.inject({ url: '/missing', headers: { 'if-none-match': '*' } })
  t.equal(missing.statusCode, 404, 'a refusal is never a 304')
  t.equal(missing.headers.etag, undefined, 'nor tagged')
  t.equal(missing.headers['cache-control'], undefined)
  const keyed = await app.inject({ url: '/keyed', headers: { 'if-none-match': tag } })
  t.equal(keyed.statusCode, 200)
  t.equal(keyed.headers.etag, tagOf('keyed'), 'an answer tagged by its key keeps its tag')
  t.equal(keyed.headers['cache-control'], undefined, 'and its own cache-control')
})

t.test('a keyed answer carries its height when it has one', async (t) => {
  const app = await taggedApp(t)
  const keyed = await app.inject('/keyed')
  t.equal(keyed.headers[BLOCK_HEIGHT_HEADER], '42')
  t.equal(BLOCK_HEIGHT_HEADER, 'x-block-height')
  const unpinned = await app.inject('/unpinned')
  t.equal(unpinned.headers.etag, tagOf('unpinned'))
  t.notOk(BLOCK_HEIGHT_HEADER in unpinned.headers, 'no height header when unpinned')
})

t.test('the request holds an answer when its If-None-Match lists the answer\'s tag', async (t) => {
  const app = await taggedApp(t)
  t.same((await app.inject({ url: '/holds', headers: { 'if-none-match': tagOf('holds') } })).json(), { holds: true })
  t.same((await app.inject('/holds')).json(), { holds: false })
})

t.test('an empty body is tagged as any other, with a valid tag', async (t) => {
  const app = await taggedApp(t)
  const empty = await app.inject('/empty')
  t.equal(empty.statusCode, 200)
  t.match(empty.headers.etag, /^"[\w-]{16}"$/)
})
