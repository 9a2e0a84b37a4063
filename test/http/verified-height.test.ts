import Fastify from 'fastify'
import t from 'tap'
import type { VerifiedCursor } from '../../src/light/cursor.js'
import { VERIFIED_HEIGHT_HEADER, verifiedHeight } from '../../src/http/verified-height.js'
import { VERIFICATION_HEADER } from '../../src/proven/verification-header.js'

// X-Verified-Height on the answers that carry X-Block-Height, after the route's own onSend
// (where the answer cache sets the height), and only once V is known. Over a replica's real
// socket: test/light/cursor.test.ts.

t.test('added after the route\'s own onSend sets the height; not without it, nor while V is unknown', async (t) => {
  const cursor = { height: undefined as number | undefined }
  const app = Fastify()
  t.teardown(async () => { await app.close() })
  app.addHook('onRoute', verifiedHeight(cursor as unknown as VerifiedCursor, () => undefined))
  app.get('/latest', { onSend: (_request, reply, payload, done) => { reply.header('x-block-height', '100'); done(null, payload) } }, async () => ({ ok: true }))
  app.get('/pure', async () => ({ ok: true }))
  t.equal((await app.inject('/latest')).headers[VERIFIED_HEIGHT_HEADER], undefined, 'V unknown')
  cursor.height = 98
  t.equal((await app.inject('/latest')).headers[VERIFIED_HEIGHT_HEADER], '98')
  t.equal((await app.inject('/pure')).headers[VERIFIED_HEIGHT_HEADER], undefined, 'no height, no verified height')
})

t.test('with a route\'s verification value (EDGE_API_VERIFICATION=headers, answers): X-Verification on the same answers, even before V is known', async (t) => {
  const cursor = { height: undefined as number | undefined }
  const app = Fastify()
  t.teardown(async () => { await app.close() })
  app.addHook('onRoute', verifiedHeight(cursor as unknown as VerifiedCursor, (url) => url === '/proven' ? undefined : 'unverified; reason="headers-only"'))
  const withHeight = { onSend: (_request: unknown, reply: { header: (name: string, value: string) => void }, payload: unknown, done: (err: null, payload: unknown) => void) => { reply.header('x-block-height', '100'); done(null, payload) } }
  app.get('/latest', withHeight as never, async () => ({ ok: true }))
  app.get('/proven', withHeight as never, async () => ({ ok: true }))
  app.get('/pure', async () => ({ ok: true }))
  t.equal((await app.inject('/latest')).headers[VERIFICATION_HEADER], 'unverified; reason="headers-only"')
  t.equal((await app.inject('/proven')).headers[VERIFICATION_HEADER], undefined, 'a route whose answers say their own: nothing added')
  t.equal((await app.inject('/pure')).headers[VERIFICATION_HEADER], undefined, 'an answer read from no chain says nothing')
})
