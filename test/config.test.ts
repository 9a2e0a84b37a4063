import t from 'tap'
import { loadConfig, type ConfigKey } from '../src/config.js'
import { ConfigError } from '../src/errors.js'
import { refusal } from './fixtures/config-refusal.js'

const base = { CHAIN_REST_URL: 'http://node:1317' }

t.test('defaults', async (t) => {
  t.same(loadConfig(base), {
    chainRestUrls: ['http://node:1317'],
    port: 18080,
    host: '0.0.0.0',
    drainAnnounceMs: 5000,
    shutdownBudgetMs: 120_000,
    chainTimeoutMs: 30_000,
    chainConcurrency: 64,
    chainMaxResponseBytes: 16 * 1024 * 1024,
    cacheBytes: 64 * 1024 * 1024,
    maxNodeLag: 2,
    headMaxAgeMs: 1000,
    shedDelayMs: 20,
    hedgeBudget: 0.1,
    hedgeMinDelayMs: 10,
    logLevel: 'info',
    exposeOptionalRoutes: false,
    metricsPort: 9464,
    metricsHost: '0.0.0.0',
    tracing: undefined,
    redisUrl: undefined,
    redisPassword: undefined,
    redisSecret: undefined,
    redisTimeoutMs: 10,
    edge: { trustedProxies: [], corsOrigins: '*', blockedRoutes: [], rateLimit: undefined },
    waiting: { perClient: 1024, perReplica: 10_000 },
    verification: { mode: 'off', trustRoot: undefined, trustingPeriodMs: 14 * 24 * 3600 * 1000 },
    warnings: []
  })
})

t.test('tracing: off by default; on with EDGE_API_OTEL_ENABLED and an endpoint; refused naming the variable', async (t) => {
  t.match(loadConfig({ ...base, EDGE_API_OTEL_ENABLED: 'true', OTEL_ENDPOINT: 'http://jaeger:4317' }).tracing, { endpoint: 'http://jaeger:4317', protocol: 'grpc' })
  const disabled = loadConfig({ ...base, EDGE_API_OTEL_ENABLED: 'true', OTEL_SDK_DISABLED: 'true' })
  t.same([disabled.tracing, disabled.warnings], [undefined, ['tracing is off: OTEL_SDK_DISABLED=true overrides EDGE_API_OTEL_ENABLED']])
  let error: unknown
  try {
    loadConfig({ ...base, EDGE_API_OTEL_ENABLED: 'true', OTEL_ENDPOINT: 'ftp://jaeger:4317' })
  } catch (err) {
    error = err
  }
  t.ok(error instanceof ConfigError)
  t.equal((error as ConfigError).variable, 'OTEL_ENDPOINT')
})

t.test('the optional verify/debug routes: true or false, nothing else', async (t) => {
  t.equal(loadConfig({ ...base, EDGE_API_EXPOSE_OPTIONAL_ROUTES: 'true' }).exposeOptionalRoutes, true)
  t.equal(loadConfig({ ...base, EDGE_API_EXPOSE_OPTIONAL_ROUTES: ' false ' }).exposeOptionalRoutes, false)
  t.equal(loadConfig({ ...base, EDGE_API_EXPOSE_OPTIONAL_ROUTES: '' }).exposeOptionalRoutes, false, 'empty is the default')
  for (const bad of ['yes', '1', 'TRUE', 'on']) {
    refusal(t, { ...base, EDGE_API_EXPOSE_OPTIONAL_ROUTES: bad }, 'EDGE_API_EXPOSE_OPTIONAL_ROUTES',
      new RegExp(`^EDGE_API_EXPOSE_OPTIONAL_ROUTES="${bad}" is invalid: must be true or false$`))
  }
})

t.test('reads every setting, trimming blanks; empty means unset', async (t) => {
  const config = loadConfig({
    CHAIN_REST_URL: ' https://rest.gonka.example:443/api/ ',
    EDGE_API_PORT: '0',
    EDGE_API_HOST: '127.0.0.1',
    EDGE_API_DRAIN_ANNOUNCE: '0',
    EDGE_API_SHUTDOWN_BUDGET: '45s',
    EDGE_API_CHAIN_TIMEOUT: '1m30s',
    EDGE_API_CHAIN_CONCURRENCY: '8',
    EDGE_API_CHAIN_MAX_RESPONSE: ' 64KiB ',
    EDGE_API_LOG_LEVEL: 'warn'
  })
  t.same(config.chainRestUrls, ['https://rest.gonka.example/api'])
  t.match(config, {
    port: 0,
    host: '127.0.0.1',
    drainAnnounceMs: 0,
    shutdownBudgetMs: 45_000,
    chainTimeoutMs: 90_000,
    chainConcurrency: 8,
    chainMaxResponseBytes: 65536,
    logLevel: 'warn'
  })
  t.equal(loadConfig({ ...base, EDGE_API_PORT: '  ', EDGE_API_HOST: '' }).port, 18080)
  t.equal(loadConfig({ ...base, EDGE_API_HOST: '::1' }).host, '::1')
  t.equal(loadConfig({ ...base, EDGE_API_HOST: 'edge-api.internal' }).host, 'edge-api.internal')
})

t.test('malformed or out-of-range values refuse to boot, naming the variable and the value', async (t) => {
  const cases: Array<[ConfigKey, string, RegExp]> = [
    ['EDGE_API_PORT', 'not-a-port', /^EDGE_API_PORT="not-a-port" is invalid: must be an integer from 0 to 65535$/],
    ['EDGE_API_PORT', '65536', /from 0 to 65535/],
    ['EDGE_API_PORT', '-1', /from 0 to 65535/],
    ['EDGE_API_PORT', '80.5', /from 0 to 65535/],
    ['EDGE_API_HOST', 'not a host', /^EDGE_API_HOST="not a host" is invalid: must be an IP address or a host name/],
    ['EDGE_API_METRICS_PORT', '0', /^EDGE_API_METRICS_PORT="0" is invalid: must be an integer from 1 to 65535, or off to serve no metrics$/],
    ['EDGE_API_METRICS_PORT', '65536', /from 1 to 65535, or off/],
    ['EDGE_API_METRICS_PORT', 'OFF', /from 1 to 65535, or off/],
    ['EDGE_API_METRICS_PORT', 'false', /from 1 to 65535, or off/],
    ['EDGE_API_METRICS_HOST', 'no such host!', /^EDGE_API_METRICS_HOST="no such host!" is invalid: must be an IP address or a host name/],
    ['EDGE_API_DRAIN_ANNOUNCE', '5', /^EDGE_API_DRAIN_ANNOUNCE="5" is invalid: must be a duration such as 250ms, 5s, 2m or 1m30s \(a bare number other than 0 is not\)$/],
    ['EDGE_API_SHUTDOWN_BUDGET', 'forever', /^EDGE_API_SHUTDOWN_BUDGET="forever" is invalid: must be a duration/],
    ['EDGE_API_SHUTDOWN_BUDGET', '0s', /^EDGE_API_SHUTDOWN_BUDGET="0s" is invalid: must be greater than 0$/],
    ['EDGE_API_CHAIN_TIMEOUT', '0', /must be greater than 0/],
    ['EDGE_API_CHAIN_TIMEOUT', '30', /must be a duration/],
    ['EDGE_API_CHAIN_CONCURRENCY', '0', /^EDGE_API_CHAIN_CONCURRENCY="0" is invalid: must be an integer from 1 to 65535$/],
    ['EDGE_API_CHAIN_CONCURRENCY', 'lots', /from 1 to 65535/],
    ['EDGE_API_CHAIN_MAX_RESPONSE', '16MB', /^EDGE_API_CHAIN_MAX_RESPONSE="16MB" is invalid: must be a number of bytes with an optional KiB or MiB suffix \(example: 16MiB\), from 64KiB to 256MiB$/],
    ['EDGE_API_CHAIN_MAX_RESPONSE', '63KiB', /from 64KiB to 256MiB/],
    ['EDGE_API_CHAIN_MAX_RESPONSE', '65535', /from 64KiB to 256MiB/],
    ['EDGE_API_CHAIN_MAX_RESPONSE', '257MiB', /from 64KiB to 256MiB/],
    ['EDGE_API_CHAIN_MAX_RESPONSE', '1.5MiB', /from 64KiB to 256MiB/],
    ['EDGE_API_CHAIN_MAX_RESPONSE', '-1', /from 64KiB to 256MiB/],
    ['EDGE_API_LOG_LEVEL', 'verbose', /^EDGE_API_LOG_LEVEL="verbose" is invalid: must be one of fatal, error, warn, info, debug, trace, silent$/]
  ]
  for (const [key, value, message] of cases) refusal(t, { ...base, [key]: value }, key, message)
})
