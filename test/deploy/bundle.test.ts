import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import t from 'tap'
import { builtMain } from '../fixtures/dist-main.js'

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
