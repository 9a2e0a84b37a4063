import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'

// The documents are the project's own: what a newcomer reads first stays short, every link
// can be followed inside the repository, and nothing cites a document it does not hold.

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const DOCS = ['README.md', 'BENCHMARKS.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)]
const read = (path: string): string => readFileSync(join(ROOT, path), 'utf8')

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
function anchor (heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, '').replace(/ /g, '-')
}

function anchors (text: string): Set<string> {
  const outside = text.replace(/^```[\s\S]*?^```/gm, '')
  return new Set([...outside.matchAll(/^#{1,6} (.+)$/gm)].map((m) => anchor(m[1] as string)))
}

t.test('the README is what a newcomer reads: under 250 lines', async (t) => {
  const lines = read('README.md').split('\n').length
  t.ok(lines < 250, `${lines} lines`)
})

t.test('every link between the documents leads to a file, and to a heading in it', async (t) => {
  let links = 0
  for (const doc of DOCS) {
    for (const [, target] of read(doc).matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target as string)) continue
      links++
      const [path = '', hash] = (target as string).split('#')
      const file = path === '' ? doc : relative(ROOT, join(ROOT, dirname(doc), path))
      t.ok(existsSync(join(ROOT, file)), `${doc} → ${target}: ${file} exists`)
      if (hash !== undefined && file.endsWith('.md')) t.ok(anchors(read(file)).has(hash), `${doc} → ${target}: the heading exists`)
    }
  }
  t.ok(links > 20, `${links} links checked`)
})

t.test('nothing cites the product specification or the research notes, documents outside the repository', async (t) => {
  // Spelled in pieces, so that this file does not cite them itself.
  const citation = new RegExp(`${['SPEC', '§'].join(' ')}|${['shared', 'reference'].join('/')}`)
  const files = ['src', 'test', 'harness', 'bench', 'scripts', 'docs', 'compose', 'kubernetes']
    .flatMap((dir) => readdirSync(join(ROOT, dir), { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile() && /\.(ts|md|ya?ml|cfg|template|sh)$/.test(e.name))
      .map((e) => relative(ROOT, join(e.parentPath, e.name))))
  const citing = [...files, 'README.md', 'BENCHMARKS.md', 'config.env.example'].filter((file) => citation.test(read(file)))
  t.same(citing, [])
  t.ok(files.length > 100, `${files.length} files read`)
})

// The programs the tests start, themselves or through harness/: each is named in the README's
// package table and checked, installed when missing, by .ci/run. One added to a test without the
// other two fails here. sh, mkfifo and nice are the base system's (coreutils); kubectl is optional (its test skips).
const BASE_SYSTEM = new Set(['sh', 'mkfifo', 'nice'])
const OPTIONAL = new Set(['kubectl'])

function testSources (dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => readFileSync(join(e.parentPath, e.name), 'utf8'))
}

t.test('every program the tests start is in the README\'s package table and installed by .ci/run', async (t) => {
  const started = new Set<string>()
  for (const text of [...testSources('test'), ...testSources('harness')]) {
    for (const m of text.matchAll(/\b(?:spawn|spawnSync|execFile|execFileSync)\('([\w-]+)'/g)) started.add(m[1] as string)
  }
  t.ok(['haproxy', 'redis-server', 'openssl'].every((p) => started.has(p)), `found the programs: ${[...started].sort().join(', ')}`)
  const readme = read('README.md')
  const ci = read('.ci/run')
  for (const program of [...started].filter((p) => !BASE_SYSTEM.has(p)).sort()) {
    t.ok(readme.includes(`\`${program}\``), `${program}: named in the README`)
    if (!OPTIONAL.has(program)) t.ok(ci.includes(`command -v ${program}`), `${program}: checked by .ci/run`)
  }
})
