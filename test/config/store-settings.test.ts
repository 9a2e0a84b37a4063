import t from 'tap'
import { loadConfig } from '../../src/config.js'
import { refusal } from '../fixtures/config-refusal.js'

// The shared tier's settings, through loadConfig as the service reads them: values that may
// hold a secret are refused naming the variable, never repeating the value.

const base = { CHAIN_REST_URL: 'http://node:1317' }

t.test('EDGE_API_REDIS_URL: redis:// or rediss://, user, password and database allowed; a malformed one refused without showing it', async (t) => {
  for (const url of ['redis://redis:6379', 'rediss://user:s3cret@cache.example:6380/2', 'redis://:s3cret@10.0.0.5', 'redis://[::1]:6379/'] as const) {
    t.equal(loadConfig({ ...base, EDGE_API_REDIS_URL: url }).redisUrl, url, url)
  }
  t.equal(loadConfig({ ...base, EDGE_API_REDIS_URL: '' }).redisUrl, undefined, 'empty: none')
  for (const url of ['http://redis:6379', 'redis:6379', 'redis://user:s3cret@', 'redis://redis:6379/db', 'redis://redis:6379?timeout=1', 'redis://redis:6379#x', 'not a url s3cret']) {
    refusal(t, { ...base, EDGE_API_REDIS_URL: url }, 'EDGE_API_REDIS_URL', /^EDGE_API_REDIS_URL is invalid \(its value is not shown: it may hold a password\): must be redis:\/\//)
    let message = ''
    try { loadConfig({ ...base, EDGE_API_REDIS_URL: url }) } catch (err) { message = (err as Error).message }
    t.notMatch(message, /s3cret/, 'the password is not in the message')
  }
})

t.test('EDGE_API_REDIS_SECRET: none by default; one of 16 characters or more taken; a shorter one refused without showing it', async (t) => {
  t.equal(loadConfig({ ...base, EDGE_API_REDIS_SECRET: '' }).redisSecret, undefined)
  t.equal(loadConfig({ ...base, EDGE_API_REDIS_SECRET: 'sixteen chars ok' }).redisSecret, 'sixteen chars ok')
  refusal(t, { ...base, EDGE_API_REDIS_SECRET: 'short s3cret' }, 'EDGE_API_REDIS_SECRET', /^EDGE_API_REDIS_SECRET is too short \(its value is not shown\): at least 16 characters/)
  let message = ''
  try { loadConfig({ ...base, EDGE_API_REDIS_SECRET: 'short s3cret' }) } catch (err) { message = (err as Error).message }
  t.notMatch(message, /s3cret/)
})

t.test('EDGE_API_REDIS_PASSWORD: none by default; taken as given', async (t) => {
  t.equal(loadConfig(base).redisPassword, undefined)
  t.equal(loadConfig({ ...base, EDGE_API_REDIS_PASSWORD: 'p@ss:word' }).redisPassword, 'p@ss:word')
})

t.test('EDGE_API_REDIS_TIMEOUT: 10ms by default; 1ms to 1s taken; anything else refused, naming the variable', async (t) => {
  t.equal(loadConfig(base).redisTimeoutMs, 10)
  t.equal(loadConfig({ ...base, EDGE_API_REDIS_TIMEOUT: '250ms' }).redisTimeoutMs, 250)
  t.equal(loadConfig({ ...base, EDGE_API_REDIS_TIMEOUT: '1s' }).redisTimeoutMs, 1000)
  for (const bad of ['0', '2s', 'soon', '-5ms']) {
    refusal(t, { ...base, EDGE_API_REDIS_TIMEOUT: bad }, 'EDGE_API_REDIS_TIMEOUT', /^EDGE_API_REDIS_TIMEOUT=.* is invalid: must be a duration from 1ms to 1s/)
  }
})
