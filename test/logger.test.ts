import t from 'tap'
import { createLogger } from '../src/logger.js'
import { LogLines } from './fixtures/log-lines.js'

t.test('writes pino JSON lines with the level, service and an ISO time; redacts credentials', async (t) => {
  const { lines, stream } = new LogLines()
  const log = createLogger('info', stream)
  log.debug('not written at info')
  log.info({ req: { headers: { authorization: 'Bearer secret', cookie: 'a=b', host: 'x' } } }, 'hello')
  await new Promise((resolve) => setImmediate(resolve))
  t.equal(lines.length, 1)
  t.match(lines[0], { level: 30, service: 'edge-api', msg: 'hello', req: { headers: { authorization: '[Redacted]', cookie: '[Redacted]', host: 'x' } } })
  t.match(lines[0]?.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
})
