import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { startChainSimulator } from '../fixtures/chain-simulator/simulator.js'
import { freePorts } from '../fixtures/e2e/replica.js'
import { builtMain } from '../fixtures/dist-main.js'
import { startMain } from '../fixtures/main-process.js'

// dist/main.js as `npm run build` leaves it (scripts/bundle.ts): one file for the start, what
// is loaded on demand left out of it, and a source map that leads back to src/ alone.
const main = builtMain()
const text = readFileSync(main, 'utf8')

/** The specifiers of the file's static imports (the bundle's own, at the top of each module). */
function staticImports (code: string): string[] {
  return [...code.matchAll(/^import\s+(?:[^'"]*?\sfrom\s+)?"([^"]+)";?$|^import\s+(?:[^'"]*?\sfrom\s+)?'([^']+)';?/gm)]
    .map(([, a, b]) => (a ?? b) as string)
}

t.test('dist/main.js imports nothing but Node itself, its own chunks and the verify pool', async (t) => {
  const imports = new Set(staticImports(text))
  const outside = [...imports].filter((s) => !s.startsWith('node:') && !s.startsWith('./'))
  t.same(outside, [], 'no package of its own from node_modules (piscina comes with the verify pool)')
  t.ok(imports.has('./verify/workers.js'), 'the verify pool stays tsc\'s module, next to the worker file Piscina starts')
  t.ok(existsSync(join(dirname(main), 'verify/worker.js')), 'which is there')
  for (const relative of [...imports].filter((s) => s.startsWith('./'))) {
    const file = join(dirname(main), relative)
    t.ok(existsSync(file), `${relative} exists`)
    const nested = staticImports(readFileSync(file, 'utf8')).filter((s) => /^@opentelemetry\/|^@grpc\//.test(s))
    t.same(nested, [], `${relative}: nothing of OpenTelemetry loaded with tracing off`)
  }
})

t.test('its source map names src/ only, so tests that run it count toward src/\'s coverage', async (t) => {
  const map = JSON.parse(readFileSync(`${main}.map`, 'utf8')) as { sources: string[], mappings: string }
  t.same(map.sources.filter((s) => !s.startsWith('../src/')), [], 'no dependency sources (tap would drop the whole file)')
  t.ok(map.sources.includes('../src/main.ts') && map.sources.includes('../src/app.ts'), 'and the service\'s own modules are there')
  t.ok(map.mappings.length > 0)
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
