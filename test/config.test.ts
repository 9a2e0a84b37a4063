import t, { type Test } from 'tap'
import { loadConfig, type ConfigKey } from '../src/config.js'
import { ConfigError } from '../src/errors.js'

const base = { CHAIN_REST_URL: 'http://node:1317' }

function refusal (t: Test, env: Record<string, string>, variable: ConfigKey, message: RegExp): void {
  let error: unknown
  try {
    loadConfig(env)
  } catch (err) {
    error = err
  }
  t.ok(error instanceof ConfigError, `${JSON.stringify(env)} refused with a ConfigError`)
  t.equal((error as ConfigError).variable, variable)
  t.match((error as ConfigError).message, message)
}

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

t.test('metrics: their own port (or off) and address, which defaults to EDGE_API_HOST', async (t) => {
  t.match(loadConfig({ ...base, EDGE_API_HOST: '127.0.0.1' }), { metricsPort: 9464, metricsHost: '127.0.0.1' })
  t.match(loadConfig({ ...base, EDGE_API_METRICS_PORT: ' 9100 ', EDGE_API_METRICS_HOST: '::' }), { metricsPort: 9100, metricsHost: '::' })
  t.match(loadConfig({ ...base, EDGE_API_METRICS_PORT: '', EDGE_API_METRICS_HOST: '' }), { metricsPort: 9464, metricsHost: '0.0.0.0' }, 'empty means unset')
  t.match(loadConfig({ ...base, EDGE_API_METRICS_PORT: '1' }), { metricsPort: 1 })
  t.match(loadConfig({ ...base, EDGE_API_METRICS_PORT: '65535' }), { metricsPort: 65535 })
  const off = loadConfig({ ...base, EDGE_API_METRICS_PORT: 'off' })
  t.equal(off.metricsPort, undefined, 'off serves no metrics')
  t.ok('metricsPort' in off)
})

t.test('the drain announce window is 0 or at least 5s', async (t) => {
  t.equal(loadConfig({ ...base, EDGE_API_DRAIN_ANNOUNCE: '5s' }).drainAnnounceMs, 5000)
  t.equal(loadConfig({ ...base, EDGE_API_DRAIN_ANNOUNCE: '0s' }).drainAnnounceMs, 0)
  refusal(t, { ...base, EDGE_API_DRAIN_ANNOUNCE: '4s' }, 'EDGE_API_DRAIN_ANNOUNCE',
    /^EDGE_API_DRAIN_ANNOUNCE="4s" is invalid: must be 0 \(no balancer in front\) or at least 5s: the router needs up to ~4s/)
  refusal(t, { ...base, EDGE_API_DRAIN_ANNOUNCE: '4999ms' }, 'EDGE_API_DRAIN_ANNOUNCE', /at least 5s/)
  refusal(t, { ...base, EDGE_API_DRAIN_ANNOUNCE: '-1s' }, 'EDGE_API_DRAIN_ANNOUNCE', /at least 5s/)
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

t.test('hedging: a percentage of reads up to 50%, or off; its floor a duration up to 10s', async (t) => {
  t.equal(loadConfig({ ...base, EDGE_API_HEDGE: 'off' }).hedgeBudget, 0)
  t.equal(loadConfig({ ...base, EDGE_API_HEDGE: '5%' }).hedgeBudget, 0.05)
  t.equal(loadConfig({ ...base, EDGE_API_HEDGE: '50%' }).hedgeBudget, 0.5)
  t.equal(loadConfig({ ...base, EDGE_API_HEDGE: '0.5%' }).hedgeBudget, 0.005)
  t.equal(loadConfig({ ...base, EDGE_API_HEDGE_MIN_DELAY: '200ms' }).hedgeMinDelayMs, 200)
  t.equal(loadConfig({ ...base, EDGE_API_HEDGE_MIN_DELAY: '10s' }).hedgeMinDelayMs, 10_000)
  const allowed = /^EDGE_API_HEDGE="[^"]*" is invalid: must be the most reads hedged as a percentage above 0 and at most 50% \(example: 10%\), or off$/
  for (const value of ['0%', '51%', '10', '0.1', 'on', 'true', '100%', '-5%']) refusal(t, { ...base, EDGE_API_HEDGE: value }, 'EDGE_API_HEDGE', allowed)
  refusal(t, { ...base, EDGE_API_HEDGE_MIN_DELAY: '0' }, 'EDGE_API_HEDGE_MIN_DELAY', /^EDGE_API_HEDGE_MIN_DELAY="0" is invalid: must be greater than 0 and at most 10s$/)
  refusal(t, { ...base, EDGE_API_HEDGE_MIN_DELAY: '11s' }, 'EDGE_API_HEDGE_MIN_DELAY', /at most 10s/)
  refusal(t, { ...base, EDGE_API_HEDGE_MIN_DELAY: '50' }, 'EDGE_API_HEDGE_MIN_DELAY', /must be a duration/)
})

t.test('EDGE_API_CHAIN_MAX_RESPONSE takes bytes, KiB or MiB', async (t) => {
  t.equal(loadConfig({ ...base, EDGE_API_CHAIN_MAX_RESPONSE: '65536' }).chainMaxResponseBytes, 65536)
  t.equal(loadConfig({ ...base, EDGE_API_CHAIN_MAX_RESPONSE: '100000' }).chainMaxResponseBytes, 100000)
  t.equal(loadConfig({ ...base, EDGE_API_CHAIN_MAX_RESPONSE: '256MiB' }).chainMaxResponseBytes, 256 * 1024 * 1024)
})

t.test('CHAIN_REST_URL must be an http(s) base URL', async (t) => {
  for (const bad of ['node:1317', 'ftp://node:1317', 'http://node:1317/?x=1', 'http://node:1317/#top', 'http://']) {
    refusal(t, { CHAIN_REST_URL: bad }, 'CHAIN_REST_URL', /^CHAIN_REST_URL=".*" is invalid: must be an http:\/\/ or https:\/\/ base URL without query or fragment \(example: http:\/\/node:1317\), or several separated by commas \(http:\/\/a:1317,http:\/\/b:1317\)$/)
  }
})

t.test('CHAIN_REST_URL lists several nodes of one chain, separated by commas', async (t) => {
  t.same(loadConfig({ CHAIN_REST_URL: 'http://a:1317,http://b:1317' }).chainRestUrls, ['http://a:1317', 'http://b:1317'])
  t.same(loadConfig({ CHAIN_REST_URL: ' http://a:1317/ , https://b.example/api/,http://c:1317 ' }).chainRestUrls,
    ['http://a:1317', 'https://b.example/api', 'http://c:1317'], 'trimmed and normalised, in the order given')
  refusal(t, { CHAIN_REST_URL: 'http://a:1317,b:1317' }, 'CHAIN_REST_URL', /^CHAIN_REST_URL="http:\/\/a:1317,b:1317" is invalid: must be an http:\/\/ or https:\/\/ base URL .*; "b:1317" is not$/)
  refusal(t, { CHAIN_REST_URL: 'http://a:1317,' }, 'CHAIN_REST_URL', /; "" is not$/)
  refusal(t, { CHAIN_REST_URL: 'http://a:1317, ,http://b:1317' }, 'CHAIN_REST_URL', /; "" is not$/)
  refusal(t, { CHAIN_REST_URL: 'http://a:1317,http://b:1317,http://a:1317/' }, 'CHAIN_REST_URL', /^CHAIN_REST_URL=".*" is invalid: lists http:\/\/a:1317 twice; each node once$/)
})

t.test('CHAIN_REST_URL is required, unless CHAIN_GRPC_URL lets us derive it (with a warning)', async (t) => {
  refusal(t, {}, 'CHAIN_REST_URL', /^CHAIN_REST_URL is required \(example: http:\/\/node:1317\)$/)
  const derived = loadConfig({ CHAIN_GRPC_URL: 'node:9090' })
  t.same(derived.chainRestUrls, ['http://node:1317'])
  t.same(derived.warnings, ['CHAIN_REST_URL is unset; derived http://node:1317 from CHAIN_GRPC_URL=node:9090. Set CHAIN_REST_URL to override'])
  t.same(loadConfig({ CHAIN_GRPC_URL: 'dns:///node:9090' }).chainRestUrls, ['http://node:1317'])
  t.same(loadConfig({ CHAIN_GRPC_URL: 'grpc://[::1]:9090' }).chainRestUrls, ['http://[::1]:1317'])
  t.same(loadConfig({ CHAIN_GRPC_URL: 'node' }).chainRestUrls, ['http://node:1317'])
  t.same(loadConfig({ CHAIN_REST_URL: 'http://rest:1317', CHAIN_GRPC_URL: 'node:9090' }).warnings, [], 'explicit wins, silently')
  refusal(t, { CHAIN_GRPC_URL: 'node:9090/x y' }, 'CHAIN_GRPC_URL', /^CHAIN_GRPC_URL="node:9090\/x y" is invalid: must be host:port/)
})
