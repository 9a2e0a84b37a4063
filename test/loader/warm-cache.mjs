// `npm test` runs this once before tap: it fills the strip-types cache (the erased text of every
// .ts file of src/, test/, harness/, bench/ and scripts/, and typebox in one file) in one process. On a fresh clone (CI)
// the cache is empty, and otherwise the first test processes, six at once, would each start
// amaro and erase the same files (~1.5 s of CPU here, once, against about that in each of them).
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { erase, typeboxInOneFile } from './strip-types-hooks.mjs'

const root = fileURLToPath(new URL('../../', import.meta.url))
let files = 0
for (const dir of ['src', 'test', 'harness', 'bench', 'scripts']) {
  for (const entry of readdirSync(join(root, dir), { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.ts') || entry.name.endsWith('.d.ts')) continue
    erase(readFileSync(join(entry.parentPath, entry.name), 'utf8'))
    files++
  }
}
typeboxInOneFile()
console.log(`strip-types cache: ${files} files`)
