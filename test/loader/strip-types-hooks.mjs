// Module hooks for strip-types.mjs: they run on Node's loader thread.
import { readFile } from 'node:fs/promises'
import amaro from 'amaro'

// TypeScript's NodeNext imports name the emitted file (`./app.js`); in the sources that file
// is `./app.ts`. A relative `.js` import from a .ts file is tried as .ts first.
export async function resolve (specifier, context, nextResolve) {
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
  const source = await readFile(new URL(url), 'utf8')
  return { format: 'module', source: amaro.transformSync(source, { mode: 'strip-only' }).code, shortCircuit: true }
}
