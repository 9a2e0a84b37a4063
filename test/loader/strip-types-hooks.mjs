// Module hooks for strip-types.mjs: they run on Node's loader thread.
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { pathToFileURL } from 'node:url'

// TypeScript's NodeNext imports name the emitted file (`./app.js`); in the sources that file
// is `./app.ts`. A relative `.js` import from a .ts file is tried as .ts first.
export async function resolve (specifier, context, nextResolve) {
  if (specifier === 'typebox') return { url: typeboxInOneFile(), format: 'module', shortCircuit: true }
  if (specifier.startsWith('.') && specifier.endsWith('.js') && context.parentURL?.endsWith('.ts')) {
    try {
      return await nextResolve(`${specifier.slice(0, -3)}.ts`, context)
    } catch (error) {
      if (error?.code !== 'ERR_MODULE_NOT_FOUND') throw error
    }
  }
  return nextResolve(specifier, context)
}

export async function load (url, context, nextLoad) {
  if (!url.startsWith('file:') || !url.endsWith('.ts')) return nextLoad(url, context)
  return { format: 'module', source: erase(readFileSync(new URL(url), 'utf8')), shortCircuit: true }
}

// Every test process erases the same few hundred files, and starting amaro (compiling its
// WebAssembly) is most of what that costs: each erased text is kept on disk under the hash of
// its source and amaro's version, and amaro is only loaded on a miss (measured: about 0.25 s
// of CPU less per test process). A file written whole and renamed into place: parallel test
// processes may write the same entry, never half of one.
const require = createRequire(import.meta.url)
const AMARO = join(dirname(require.resolve('amaro')), '..')
const VERSION = JSON.parse(readFileSync(join(AMARO, 'package.json'), 'utf8')).version
const CACHE = join(AMARO, '../.cache/strip-types')
let amaro

export function erase (source) {
  const file = join(CACHE, `${createHash('sha1').update(`amaro ${VERSION}\0`).update(source).digest('hex')}.js`)
  try {
    return readFileSync(file, 'utf8')
  } catch {}
  amaro ??= require('amaro')
  const code = amaro.transformSync(source, { mode: 'strip-only' }).code
  mkdirSync(CACHE, { recursive: true })
  const partial = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}`
  writeFileSync(partial, code)
  renameSync(partial, file)
  return code
}

// typebox's ES module is 373 files, and each file a test process loads crosses to this thread
// and back twice (resolve, load): about a second of a test process' CPU, in every test of the
// app. Served as one file, bundled by esbuild once and kept like the erased texts (the bundle
// of dist/ holds typebox the same way). Every import of typebox in src/ and test/ names the
// package itself, so there is one typebox in a test process, as in the service.
let typeboxUrl

export function typeboxInOneFile () {
  if (typeboxUrl !== undefined) return typeboxUrl
  const typebox = join(AMARO, '../typebox')
  const version = JSON.parse(readFileSync(join(typebox, 'package.json'), 'utf8')).version
  const file = join(CACHE, `typebox-${version}.mjs`)
  if (!existsSync(file)) {
    const { outputFiles } = require('esbuild').buildSync({ entryPoints: ['typebox'], absWorkingDir: typebox, bundle: true, format: 'esm', platform: 'node', write: false, logLevel: 'silent' })
    mkdirSync(CACHE, { recursive: true })
    const partial = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}`
    writeFileSync(partial, outputFiles[0].contents)
    renameSync(partial, file)
  }
  typeboxUrl = pathToFileURL(file).href
  return typeboxUrl
}
