import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { ConfigError } from '../../src/errors.js'
import { readTransportSettings, TRANSPORT_VARIABLES } from '../../src/tracing/transport-settings.js'
import { makeTlsFiles } from '../fixtures/tls-certs.js'

type TracingVariable = typeof TRANSPORT_VARIABLES[number]
const files = makeTlsFiles()
t.teardown(() => files.remove())

function read (env: Partial<Record<TracingVariable, string>>) {
  return readTransportSettings((key) => env[key], (key, allowed) => new ConfigError(key, `${key} is invalid: ${allowed}`))
}

function refused (t: Test, env: Partial<Record<TracingVariable, string>>, variable: string, message: RegExp): void {
  t.throws(() => read(env), { variable, message }, `${JSON.stringify(env)} refused naming ${variable}`)
}

t.test('compression: none by default, gzip or none, the traces variable over the generic one', async (t) => {
  t.equal(read({}).compression, 'none')
  t.equal(read({ OTEL_EXPORTER_OTLP_COMPRESSION: 'GZIP' }).compression, 'gzip')
  t.equal(read({ OTEL_EXPORTER_OTLP_COMPRESSION: 'gzip', OTEL_EXPORTER_OTLP_TRACES_COMPRESSION: 'none' }).compression, 'none')
  refused(t, { OTEL_EXPORTER_OTLP_COMPRESSION: 'deflate' }, 'OTEL_EXPORTER_OTLP_COMPRESSION', /must be gzip or none/)
  refused(t, { OTEL_EXPORTER_OTLP_TRACES_COMPRESSION: 'zstd' }, 'OTEL_EXPORTER_OTLP_TRACES_COMPRESSION', /must be gzip or none/)
})

t.test('the CA and the client certificate are read as PEM, the traces variables over the generic ones', async (t) => {
  t.same(read({}), { compression: 'none', tls: { ca: undefined, cert: undefined, key: undefined }, tlsVariables: [] })
  const settings = read({
    OTEL_EXPORTER_OTLP_CERTIFICATE: '/nonexistent/ignored.pem',
    OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE: files.caCert,
    OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE: files.clientCert,
    OTEL_EXPORTER_OTLP_CLIENT_KEY: files.clientKey
  })
  t.same(settings.tls, { ca: files.read(files.caCert), cert: files.read(files.clientCert), key: files.read(files.clientKey) })
  t.same(settings.tlsVariables, ['OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE', 'OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE', 'OTEL_EXPORTER_OTLP_CLIENT_KEY'])
  t.same(read({ OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE: files.clientCert, OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY: files.clientKey }).tls.key, files.read(files.clientKey))
})

t.test('a file that cannot be read, is not PEM, or is half of a pair refuses to boot naming its variable', async (t) => {
  refused(t, { OTEL_EXPORTER_OTLP_CERTIFICATE: join(files.dir, 'missing.pem') }, 'OTEL_EXPORTER_OTLP_CERTIFICATE', /must be a readable file: ENOENT/)
  refused(t, { OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE: files.clientKey }, 'OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE', /must be a PEM file holding a certificate/)
  const garbage = join(files.dir, 'garbage.pem')
  writeFileSync(garbage, 'not a key')
  refused(t, { OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE: files.clientCert, OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY: garbage }, 'OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY', /must be a PEM file holding a private key/)
  refused(t, { OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE: files.clientCert }, 'OTEL_EXPORTER_OTLP_CLIENT_KEY', /must be set with OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE/)
  refused(t, { OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY: files.clientKey }, 'OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE', /must be set with OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY/)
  refused(t, { OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE: files.clientCert, OTEL_EXPORTER_OTLP_CLIENT_KEY: files.serverKey }, 'OTEL_EXPORTER_OTLP_CLIENT_KEY', /must be the private key of OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE/)
})
