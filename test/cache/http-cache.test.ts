import t from 'tap'

t.test('a /v1 route without a class refuses to boot', async (t) => {
  const Fastify = (await import('fastify')).default
  const { answerCaching } = await import('../../src/cache/http-cache.js')
  const app = Fastify()
  t.teardown(async () => app.close())
  await t.rejects(async () => {
    await app.register(async (scope) => {
      await answerCaching(scope, { chain: {} as never, cache: undefined })
      scope.get('/unlisted', async () => ({}))
    }, { prefix: '/v1' })
  }, /GET \/v1\/unlisted has no class in ROUTE_CLASSES/)
})
