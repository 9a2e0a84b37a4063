// dist/main.js (copied there by scripts/bundle.ts): runs the bundle, dist/bundle/main.cjs, as
// a CommonJS module compiled with V8's code cache of it (main.cjs.cache), which spares most of
// a start's parsing and compiling. A cache that is missing, or that V8 refuses (made by another
// Node, or with other flags), only costs that time: V8 then compiles the source, as Node would.
// EDGE_API_WRITE_CODE_CACHE=1 (the build, once) writes the cache at exit, with every function
// compiled by then.
import { readFileSync, writeFileSync } from 'node:fs'
import { createRequire, Module } from 'node:module'
import { dirname } from 'node:path'
import process from 'node:process'
import { fileURLToPath } from 'node:url'
import vm from 'node:vm'

const file = fileURLToPath(new URL('./bundle/main.cjs', import.meta.url))
const cacheFile = `${file}.cache`
let cachedData
try {
  cachedData = readFileSync(cacheFile)
} catch {}
// The bundle has no import(): scripts/bundle.ts makes each a require().
const script = new vm.Script(Module.wrap(readFileSync(file, 'utf8')), { filename: file, cachedData })
if (process.env.EDGE_API_WRITE_CODE_CACHE === '1') process.on('exit', () => writeFileSync(cacheFile, script.createCachedData()))
const module = { exports: {} }
script.runInThisContext()(module.exports, createRequire(file), module, file, dirname(file))
