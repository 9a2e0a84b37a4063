import { readdirSync, readFileSync } from 'node:fs'
import { Module } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Script } from 'node:vm'
import t from 'tap'
import { startChainSimulator } from '../../harness/chain-simulator/simulator.js'
import { freePorts } from '../../harness/ports.js'
import { builtMain } from '../../harness/dist-main.js'
import { startMain } from '../../harness/main-process.js'

// dist/main.js as `npm run build` leaves it (scripts/bundle.ts): a loader that runs one bundle,
// dist/bundle/main.cjs, with V8's code cache of it; what is loaded on demand left out of it; a
// source map that leads back to src/ alone.
const main = builtMain()
const bundle = join(dirname(main), 'bundle/main.cjs')
const text = readFileSync(bundle, 'utf8')

/** The specifiers of a file's static imports. */
function staticImports (code: string): string[] {
  return [...code.matchAll(/^import\s+(?:[^'"]*?\sfrom\s+)?'([^']+)';?/gm)].map(([, specifier]) => specifier as string)
}

/** The bundle compiled as the loader compiles it, with the cache or the given one. */
function compiled (cachedData = readFileSync(`${bundle}.cache`)): Script {
  return new Script(Module.wrap(text), { filename: bundle, cachedData })
}

t.test('dist/main.js imports Node alone and compiles the bundle with a code cache this Node takes', async (t) => {
  t.same(staticImports(readFileSync(main, 'utf8')).filter((s) => !s.startsWith('node:')), [], 'no package: everything is in the bundle')
  t.equal(compiled().cachedDataRejected, false, 'V8 takes the cache the build made')
  const other = Buffer.from(readFileSync(`${bundle}.cache`))
  other.fill(0, 0, 64)
  t.equal(compiled(other).cachedDataRejected, true, 'and refuses a cache that is not this bundle\'s (then it compiles the source)')
})

t.test('a cache V8 refuses (here: other V8 flags) only costs time: the process starts and serves', async (t) => {
  const sim = await startChainSimulator()
  t.teardown(async () => { await sim.close() })
  const child = startMain({ CHAIN_REST_URL: sim.url, EDGE_API_HOST: '127.0.0.1', EDGE_API_PORT: '0', EDGE_API_DRAIN_ANNOUNCE: '0', NODE_OPTIONS: '--stack-trace-limit=5' })
  t.teardown(() => { if (child.child.exitCode === null) child.child.kill('SIGKILL') })
  const res = await fetch(`http://127.0.0.1:${await child.port()}/v1/status`)
  t.equal(res.status, 200)
  child.child.kill('SIGTERM')
  t.equal((await child.exited).code, 0)
})

t.test('its source map names src/ only, so tests that run it count toward src/\'s coverage', async (t) => {
  const map = JSON.parse(readFileSync(`${bundle}.map`, 'utf8')) as { sources: string[], mappings: string }
  t.same(map.sources.filter((s) => !s.startsWith('../../src/')), [], 'no dependency sources (tap would drop the whole file)')
  t.ok(map.sources.includes('../../src/main.ts') && map.sources.includes('../../src/app.ts'), 'and the service\'s own modules are there')
  t.ok(map.mappings.length > 0)
  t.match(text, /\/\/# sourceMappingURL=main\.cjs\.map\s*$/, 'the bundle names its map')
})

t.test('a start with the optional routes and tracing off (the defaults) loads neither piscina nor OpenTelemetry', async (t) => {
  const sim = await startChainSimulator()
  t.teardown(async () => { await sim.close() })
  const loaded = join(t.testdir({}), 'loaded.txt')
  const [metricsPort] = await freePorts(1) as [number]
  const main = startMain({
    CHAIN_REST_URL: sim.url,
    EDGE_API_HOST: '127.0.0.1',
    EDGE_API_PORT: '0',
    EDGE_API_DRAIN_ANNOUNCE: '0',
    // Metrics on, as deployed: prom-client asks for @opentelemetry/api as it loads (exemplars).
    EDGE_API_METRICS_PORT: String(metricsPort),
    NODE_OPTIONS: `--require ${fileURLToPath(new URL('../fixtures/loaded-modules.cjs', import.meta.url))}`,
    LOADED_MODULES_FILE: loaded
  })
  t.teardown(() => { if (main.child.exitCode === null) main.child.kill('SIGKILL') })
  const port = await main.port()
  const res = await fetch(`http://127.0.0.1:${port}/v1/status`)
  t.equal(res.status, 200, 'it serves')
  main.child.kill('SIGTERM')
  t.equal((await main.exited).code, 0)
  const files = readFileSync(loaded, 'utf8').split('\n')
  t.ok(files.some((file) => file.endsWith('loaded-modules.cjs')), 'the list is the child\'s own')
  t.same(files.filter((file) => /node_modules\/(piscina|@opentelemetry)\//.test(file)), [], 'loaded when first needed instead')
})

t.test('src/ takes only Pool from undici, the part of it the bundle holds (scripts/bundle.ts)', async (t) => {
  const src = fileURLToPath(new URL('../../src/', import.meta.url))
  const imports = readdirSync(src, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .flatMap((file) => [...readFileSync(join(src, file), 'utf8').matchAll(/^import (.*) from 'undici'$/gm)].map(([, what]) => what))
  t.same([...new Set(imports)].sort(), ['type { Pool }', '{ Pool }'])
  t.notOk(text.includes('node_modules/undici/index.js'), 'undici\'s index (fetch, WebSocket, mocks …) is not in the bundle')
})
