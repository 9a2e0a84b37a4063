// `npm run build`. First each module of src/ becomes its own dist/<path>.js, with its source
// map: the verify pool's worker thread and the benchmarks' in-process children load those.
// Then dist/main.js, the entry point the image, the tests and the benchmarks run, loads one
// file holding src/ and the dependencies it loads at start, dist/bundle/main.cjs, with a V8
// code cache of it made here.
// The modules are esbuild's, not tsc's: tsconfig's erasableSyntaxOnly and isolatedModules
// leave nothing to compile but the types to drop, which esbuild does in well under a second
// where tsc took ~20 s of every build; type errors are `npm run typecheck`'s (CI runs it
// before the tests), as they were the tests' already.
// Node 20 spends most of a start finding, reading and compiling ~2,000 module files
// (typebox alone has 700, most of them never used); one file, the unused code left out, starts
// in about 0.6× the CPU time, and its code cache takes another third off (BENCHMARKS.md, cold
// start).
//
// Why CommonJS: Node 20 has no compile cache for ES modules (module.enableCompileCache is
// 22.1+), but a vm.Script takes V8's cachedData. dist/main.js (scripts/main-loader.js) compiles
// the bundle as a CommonJS module with the cache, and without it when the cache is missing or
// V8 refuses it (another Node or other flags): slower, never different.
//
// Left out of the bundle, loaded from node_modules when first needed: tracing's SDK and
// exporters (imported on demand), the shared tier's Redis client, and piscina (required by the verify pool's first task).
// Source maps point at src/ only, for stack traces and for the coverage of the tests that run
// dist/main.js: tap leaves out the whole of a file whose map names any node_modules source.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { copyFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build, type Plugin } from 'esbuild'

const root = fileURLToPath(new URL('../', import.meta.url))
const BUNDLE = join(root, 'dist/bundle/main.cjs')

const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'

// Each module of src/ keeps the import.meta.url of its per-module output (dist/<path>.js), so what
// it finds next to itself (build-info.json, the verify worker, package.json) is where it was;
// src/main.ts's top-level await becomes a call (a CommonJS module has no top-level await, and
// main() handles its own failures).
const ownUrls: Plugin = {
  name: 'own-urls',
  setup (build) {
    build.onLoad({ filter: /\/src\/.*\.ts$/ }, (args) => {
      const compiled = relative(join(root, 'dist/bundle'), join(root, 'dist', relative(join(root, 'src'), args.path))).replace(/\.ts$/, '.js')
      let text = readFileSync(args.path, 'utf8').replaceAll('import.meta.url', `new URL(${JSON.stringify(compiled)}, __bundleUrl).href`)
      if (args.path === join(root, 'src/main.ts')) {
        const withoutAwait = text.replace(/^await main\(\)$/m, 'void main()')
        if (withoutAwait === text) throw new Error('src/main.ts: no top-level `await main()` to turn into a call')
        text = withoutAwait
      }
      return { contents: text, loader: 'ts' }
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

rmSync(join(root, 'dist/bundle'), { recursive: true, force: true })
await build({
  absWorkingDir: root,
  entryPoints: ['src/**/*.ts'],
  outdir: 'dist',
  outbase: 'src',
  platform: 'node',
  format: 'esm',
  target: 'node20',
  sourcemap: true,
  logLevel: 'warning'
})
const result = await build({
  absWorkingDir: root,
  entryPoints: ['src/main.ts'],
  outfile: BUNDLE,
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  sourcemap: true,
  // Only what the code imports: @opentelemetry/* and @grpc/* are imported on demand, as is
  // the shared tier's client (@redis/*, with EDGE_API_REDIS_URL only), and piscina is
  // required by the verify pool's first task.
  external: ['@opentelemetry/*', '@grpc/*', '@redis/*', 'piscina'],
  // import() of those becomes a require() when it runs: a function compiled from V8's code
  // cache has lost the vm.Script's import() callback (ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING),
  // and each of them has a CommonJS build.
  supported: { 'dynamic-import': false },
  banner: { js: "const __bundleUrl = require('node:url').pathToFileURL(__filename).href;" },
  plugins: [ownUrls, lazyOtelApi, undiciPool],
  metafile: true,
  logLevel: 'warning'
})
copyFileSync(join(root, 'scripts/main-loader.js'), join(root, 'dist/main.js'))
await writeCodeCache()

for (const output of Object.keys(result.metafile.outputs).filter((file) => file.endsWith('.map'))) {
  const file = join(root, output)
  writeFileSync(file, JSON.stringify(ownSourcesOnly(JSON.parse(readFileSync(file, 'utf8')) as SourceMap)))
}

interface SourceMap { sources: string[], sourcesContent?: Array<string | null>, mappings: string, names: string[] }

/**
 * The map with src/'s sources only: the dependencies' code, and the plugins' few lines above,
 * maps to nothing (as if unmapped).
 */
function ownSourcesOnly (map: SourceMap): SourceMap {
  const kept = map.sources.map((source) => source.startsWith('../../src/'))
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

/**
 * Runs dist/main.js once (no chain: a closed port; metrics off), answers a few requests and
 * stops it: the loader then writes the code cache of every function the start and those
 * answers compiled, the ones V8 compiles lazily included.
 */
async function writeCodeCache (): Promise<void> {
  const child = spawn(process.execPath, [join(root, 'dist/main.js')], {
    env: {
      PATH: process.env.PATH,
      EDGE_API_WRITE_CODE_CACHE: '1',
      CHAIN_REST_URL: 'http://127.0.0.1:9',
      EDGE_API_HOST: '127.0.0.1',
      EDGE_API_PORT: '0',
      EDGE_API_METRICS_PORT: 'off',
      EDGE_API_DRAIN_ANNOUNCE: '0'
    },
    stdio: ['ignore', 'pipe', 'inherit']
  })
  // Read to the end (a log reader that stops would fill the pipe), the port from "listening".
  let out = ''
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk
      const listening = /"port":(\d+)[^\n]*"msg":"listening"/.exec(out)
      if (listening !== null) resolve(Number(listening[1]))
    })
    child.once('exit', () => { reject(new Error(`dist/main.js did not start for its code cache: ${out}`)) })
  })
  for (const path of ['/healthz', '/readyz', '/v1/status', '/v1/nowhere']) await fetch(`http://127.0.0.1:${port}${path}`).then(async (res) => await res.arrayBuffer())
  child.kill('SIGTERM')
  const [code] = await once(child, 'exit') as [number | null]
  if (code !== 0) throw new Error(`dist/main.js exited with ${code} while making its code cache`)
}
