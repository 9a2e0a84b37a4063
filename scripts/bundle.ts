// The second half of `npm run build`: dist/main.js, the entry point the image, the tests and
// the benchmarks run, becomes one file holding src/ and the dependencies it loads at start.
// Node 20 spends most of a start finding, reading and compiling ~2,000 module files
// (typebox alone has 700, most of them never used); one file, the unused code left out, starts
// in about 0.6× the CPU time (BENCHMARKS.md, cold start). tsc's per-module output stays
// beside it in dist/: the benchmarks' in-process children import it, and so does the bundle
// for the modules listed below.
//
// Left out of the bundle, loaded from node_modules or dist/ when first needed:
// - what is imported only on demand (tracing's SDK and exporters): split into chunks of
//   their own (dist/bundle/), never read when tracing is off;
// - the verify worker pool (src/verify/workers.ts): Piscina starts its thread from the file
//   next to that module, dist/verify/worker.js, which a bundled copy would not find.
// Source maps point at src/ only, for stack traces and for the coverage of the tests that run
// dist/main.js: tap leaves out the whole of a file whose map names any node_modules source.
import { readFileSync, writeFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build, type Plugin } from 'esbuild'

const root = fileURLToPath(new URL('../', import.meta.url))

/** Modules of src/ whose imports stay imports of tsc's dist/ output (paths without .ts). */
const UNBUNDLED = ['verify/workers']

const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'

const unbundled: Plugin = {
  name: 'unbundled',
  setup (build) {
    build.onResolve({ filter: /^\.\.?\// }, (args) => {
      const target = relative(join(root, 'src'), resolve(dirname(args.importer), args.path)).replace(/\.js$/, '')
      // Relative to dist/main.js, where the import ends up.
      return UNBUNDLED.includes(target) ? { path: `./${target}.js`, external: true } : undefined
    })
  }
}

// prom-client requires @opentelemetry/api as it loads, for exemplars, which edge-api never
// turns on; with tracing off that require alone was about 20 ms of a start's CPU (finding and
// compiling the API's files in node_modules). prom-client gets the API on first use instead.
const lazyOtelApi: Plugin = {
  name: 'lazy-otel-api',
  setup (build) {
    build.onResolve({ filter: /^@opentelemetry\/api$/ }, (args) =>
      args.importer.includes('/node_modules/prom-client/') ? { path: '@opentelemetry/api', namespace: 'lazy-otel-api' } : undefined)
    build.onLoad({ filter: /.*/, namespace: 'lazy-otel-api' }, () => ({
      contents: "let api\nmodule.exports = new Proxy({}, { get: (_target, key) => (api ??= require('@opentelemetry/api'))[key] })\n",
      loader: 'js'
    }))
  }
}

// src/ takes only Pool from undici (test/deploy/bundle.test.ts checks). undici's index.js loads
// everything else too (fetch, WebSocket, cookies, mocks, caches), and its cookies module reads
// globalThis.Headers, which makes Node load its own copy of undici as well: about 40 ms of a
// start's CPU. The bundle takes Pool as index.js assembles it: the class, with the request
// API on Dispatcher's prototype.
const undiciPool: Plugin = {
  name: 'undici-pool',
  setup (build) {
    build.onResolve({ filter: /^undici$/ }, (args) =>
      args.importer.startsWith(join(root, 'src')) ? { path: 'undici', namespace: 'undici-pool' } : undefined)
    build.onLoad({ filter: /.*/, namespace: 'undici-pool' }, () => ({
      contents: [
        "const Dispatcher = require('undici/lib/dispatcher/dispatcher')",
        "Object.assign(Dispatcher.prototype, require('undici/lib/api'))",
        "module.exports = { Pool: require('undici/lib/dispatcher/pool') }",
        ''
      ].join('\n'),
      loader: 'js',
      resolveDir: root
    }))
  }
}

const result = await build({
  absWorkingDir: root,
  entryPoints: { main: 'src/main.ts' },
  outdir: 'dist',
  chunkNames: 'bundle/[name]-[hash]',
  bundle: true,
  splitting: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  sourcemap: true,
  // Only what the code imports: @opentelemetry/* and @grpc/* are imported on demand, and
  // piscina only by the unbundled worker pool.
  external: ['@opentelemetry/*', '@grpc/*', 'piscina'],
  // CommonJS dependencies (fastify, pino, undici …) call require(): the bundle gives them one.
  banner: { js: "import { createRequire as __edgeApiCreateRequire } from 'node:module'; const require = __edgeApiCreateRequire(import.meta.url);" },
  plugins: [unbundled, lazyOtelApi, undiciPool],
  metafile: true,
  logLevel: 'warning'
})

for (const output of Object.keys(result.metafile.outputs).filter((file) => file.endsWith('.js.map'))) {
  const file = join(root, output)
  writeFileSync(file, JSON.stringify(ownSourcesOnly(JSON.parse(readFileSync(file, 'utf8')) as SourceMap)))
}

interface SourceMap { sources: string[], sourcesContent?: Array<string | null>, mappings: string, names: string[] }

/**
 * The map with src/'s sources only: the dependencies' code, and the plugins' few lines above,
 * maps to nothing (as if unmapped).
 */
function ownSourcesOnly (map: SourceMap): SourceMap {
  const kept = map.sources.map((source) => source.startsWith('../src/'))
  const index = new Map<number, number>()
  kept.forEach((keep, i) => { if (keep) index.set(i, index.size) })
  // Segments are deltas from the previous one (the source index, line and column, and name
  // across lines; the column within a line): decoded to absolute values, filtered, re-encoded.
  const state = [0, 0, 0, 0]
  const out = [0, 0, 0, 0]
  const lines = map.mappings.split(';').map((line) => {
    let column = 0
    let outColumn = 0
    const segments: string[] = []
    for (const segment of line.split(',').filter((s) => s !== '')) {
      const [dColumn = 0, ...rest] = decodeVlq(segment)
      column += dColumn
      if (rest.length === 0) continue
      for (let i = 0; i < rest.length; i++) state[i] = (state[i] as number) + (rest[i] as number)
      const source = index.get(state[0] as number)
      if (source === undefined) continue
      const fields = [column - outColumn, source - (out[0] as number), (state[1] as number) - (out[1] as number), (state[2] as number) - (out[2] as number)]
      out[0] = source
      out[1] = state[1] as number
      out[2] = state[2] as number
      if (rest.length === 4) {
        fields.push((state[3] as number) - (out[3] as number))
        out[3] = state[3] as number
      }
      outColumn = column
      segments.push(fields.map(encodeVlq).join(''))
    }
    return segments.join(',')
  })
  return {
    ...map,
    sources: map.sources.filter((_s, i) => kept[i]),
    ...(map.sourcesContent === undefined ? {} : { sourcesContent: map.sourcesContent.filter((_s, i) => kept[i]) }),
    mappings: lines.join(';')
  }
}

function decodeVlq (segment: string): number[] {
  const values: number[] = []
  let value = 0
  let shift = 0
  for (const char of segment) {
    const digit = BASE64.indexOf(char)
    value += (digit & 31) << shift
    if ((digit & 32) !== 0) {
      shift += 5
    } else {
      values.push((value & 1) === 1 ? -(value >>> 1) : value >>> 1)
      value = 0
      shift = 0
    }
  }
  return values
}

function encodeVlq (value: number): string {
  let rest = value < 0 ? (-value << 1) | 1 : value << 1
  let out = ''
  do {
    let digit = rest & 31
    rest >>>= 5
    if (rest > 0) digit |= 32
    out += BASE64[digit]
  } while (rest > 0)
  return out
}
