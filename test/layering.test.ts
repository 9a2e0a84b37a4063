import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'

// The house drawn from src/'s imports (docs/layout.md, "Layers"): no import circle among its
// files, and no import from a lower layer to a higher one. A module of a layer may import its
// own layer and those below it, never one above: the chain knows nothing of HTTP, metrics
// nothing of HTTP (http/ reports to metrics/, not the other way), the routes nothing of the
// app that mounts them. Type-only imports count: they are the same knowledge.

/** From the bottom up; each entry a top-level file (without .ts) or directory of src/. */
const LAYERS: ReadonlyArray<readonly string[]> = [
  ['named-error', 'errors', 'byte-size', 'duration', 'build-info', 'bounded-limit', 'fair-queue', 'clock', 'wire'],
  ['cometbft', 'verify', 'chain', 'light'],
  ['cache', 'tracing', 'readiness', 'lifecycle', 'config', 'edge-settings', 'logger', 'proven'],
  ['shared'],
  ['metrics'],
  ['admission'],
  ['http'],
  ['waiting'],
  ['routes'],
  ['app'],
  ['service'],
  ['main']
]

const SRC = fileURLToPath(new URL('../src/', import.meta.url))

/** Every src/ file (relative to src/) and the src/ files it imports (static, re-exports, import()). */
function importGraph (): Map<string, string[]> {
  const graph = new Map<string, string[]>()
  const files = readdirSync(SRC, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.ts'))
  for (const file of files) {
    const text = readFileSync(join(SRC, file), 'utf8')
    const specifiers = [...text.matchAll(/(?:^(?:import|export)\b[^'"]*?\bfrom\s+|\bimport\(\s*)'(\.{1,2}\/[^']+)'/gm)].map(([, s]) => s as string)
    graph.set(file, specifiers.map((s) => relative(SRC, join(SRC, dirname(file), s)).replace(/\.js$/, '.ts')))
  }
  return graph
}

/** The layer of a src/ file: its top-level directory's, or its own name's at the top. */
function layerOf (file: string): number {
  const top = file.split('/')[0] as string
  return LAYERS.findIndex((layer) => layer.includes(top.replace(/\.ts$/, '')))
}

/** The import circles: each strongly connected set of two files or more (Tarjan), or a file importing itself. */
function circles (graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const found: string[][] = []
  const visit = (file: string): void => {
    index.set(file, index.size)
    low.set(file, index.get(file) as number)
    stack.push(file)
    onStack.add(file)
    for (const next of graph.get(file) ?? []) {
      if (!index.has(next)) {
        visit(next)
        low.set(file, Math.min(low.get(file) as number, low.get(next) as number))
      } else if (onStack.has(next)) {
        low.set(file, Math.min(low.get(file) as number, index.get(next) as number))
      }
    }
    if (low.get(file) !== index.get(file)) return
    const circle: string[] = []
    let member: string
    do {
      member = stack.pop() as string
      onStack.delete(member)
      circle.push(member)
    } while (member !== file)
    if (circle.length > 1 || (graph.get(file) ?? []).includes(file)) found.push(circle.sort())
  }
  for (const file of graph.keys()) if (!index.has(file)) visit(file)
  return found
}

const graph = importGraph()

t.test('every src/ file imports files that exist, and belongs to a layer', async (t) => {
  for (const [file, imports] of graph) {
    t.not(layerOf(file), -1, `${file}: add its top-level name to LAYERS in test/layering.test.ts`)
    for (const imported of imports) t.ok(graph.has(imported), `${file} imports ${imported}, a src/ file`)
  }
})

t.test('no import circle among src/ files', async (t) => {
  t.same(circles(graph).map((circle) => circle.join(' <-> ')), [], 'each circle is listed with its files')
})

t.test('no import from a lower layer to a higher one', async (t) => {
  const upward: string[] = []
  for (const [file, imports] of graph) {
    for (const imported of imports) {
      if (layerOf(imported) > layerOf(file)) upward.push(`${file} -> ${imported}`)
    }
  }
  t.same(upward, [], `layers, from the bottom: ${LAYERS.map((layer) => layer.join(' ')).join(' < ')}`)
})

t.test('the checks see what they check: a circle and an upward import are found', async (t) => {
  t.same(circles(new Map([['a.ts', ['b.ts']], ['b.ts', ['c.ts', 'a.ts']], ['c.ts', []], ['d.ts', ['d.ts']]])), [['a.ts', 'b.ts'], ['d.ts']])
  t.ok(layerOf('metrics/registry.ts') < layerOf('admission/shedding.ts'), 'metrics sit below http')
  t.ok(graph.get('chain/heights.ts')?.includes('chain/types.ts'), 'the graph reads type-only imports')
  t.ok(graph.get('service.ts')?.includes('metrics/registry.ts'), 'and import()')
})

// Around src/: harness/ holds the programs both the tests and the benchmarks start (the chain
// simulator, replicas, the pool behind HAProxy, redis-server) and the route catalogue the demo
// prints, so none reaches into another's folder for them: harness/ imports nothing of test/ or
// bench/, bench/ and scripts/ nothing of test/.
const ROOT = fileURLToPath(new URL('..', import.meta.url))
const OUT_OF_BOUNDS: ReadonlyArray<readonly [string, readonly string[]]> = [['harness', ['test', 'bench']], ['bench', ['test']], ['scripts', ['test', 'bench']]]

/** "<file> -> <path>" for each relative import or URL of a file under `dir` that lands in one of `banned`. */
function reachesInto (dir: string, banned: readonly string[]): string[] {
  const found: string[] = []
  for (const entry of readdirSync(join(ROOT, dir), { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !/\.(ts|mjs)$/.test(entry.name)) continue
    const file = join(entry.parentPath, entry.name)
    for (const [, specifier] of readFileSync(file, 'utf8').matchAll(/'(\.{1,2}\/[^']*)'/g)) {
      const target = relative(ROOT, join(dirname(file), specifier as string))
      if (banned.includes(target.split('/')[0] as string)) found.push(`${relative(ROOT, file)} -> ${target}`)
    }
  }
  return found
}

t.test('harness/, bench/ and scripts/ import nothing of test/ (nor harness/ and scripts/ of bench/)', async (t) => {
  for (const [dir, banned] of OUT_OF_BOUNDS) t.same(reachesInto(dir, banned), [], `${dir}/ reaches into none of ${banned.join(', ')}`)
  t.ok(readdirSync(join(ROOT, 'harness')).length > 5, 'the harness is where it is said to be')
})
