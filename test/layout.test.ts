import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'

const root = fileURLToPath(new URL('..', import.meta.url))

function files (dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => relative(root, join(entry.parentPath, entry.name)))
}

// tap's coverage gate only sees files some test loads: a src file nobody imports would
// slip through at 0%. Every src file therefore has its own test file, mirroring src/ (a
// process-level one, below, counts).
t.test('every src file has a mirror test file', async (t) => {
  const tests = new Set(files(join(root, 'test')))
  for (const source of files(join(root, 'src'))) {
    const mirror = source.replace(/^src\//, 'test/').replace(/\.ts$/, '.test.ts')
    const processMirror = mirror.replace(/\.test\.ts$/, '.process.test.ts')
    t.ok(tests.has(mirror) || tests.has(processMirror), `${source} → ${mirror}`)
  }
})

// A test that starts dist/main.js, HAProxy or redis-server is told from a unit test by its
// name, *.process.test.ts, or by its folder: e2e/ (a pool of replicas behind a router),
// deploy/ (the deployment's files run for real), shared/ (the shared tier over redis-server).
const PROCESS_FOLDERS = /^test\/(?:e2e|deploy|shared)\//
const STARTS_A_PROCESS = /\b(?:startMain|serveMain)\(|new (?:Replica|Router|RedisServer)\(|redisFor\(|spawn\('haproxy'|\bDIST_MAIN\b/
t.test('process-level tests are named *.process.test.ts or sit in a process folder', async (t) => {
  const tests = files(join(root, 'test')).filter((file) => file.endsWith('.test.ts') && !PROCESS_FOLDERS.test(file))
  const starting = tests.filter((file) => STARTS_A_PROCESS.test(readFileSync(join(root, file), 'utf8')))
  t.ok(starting.length >= 8, `${starting.length} process-level tests found`)
  t.same(starting.filter((file) => !file.endsWith('.process.test.ts')), [], 'rename these to *.process.test.ts')
  t.same(tests.filter((file) => file.endsWith('.process.test.ts') && !starting.includes(file)), [], 'these start no process: drop .process from their names')
})

// What a reader takes in at once: no src file over 300 lines, no function over 50 (a function's
// lines run from its first token to its closing brace, nested functions counted in their own
// right and in their parent's).
const MAX_FILE_LINES = 300
const MAX_FUNCTION_LINES = 50

function lineCount (text: string): number {
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0)
}

/** Every function-like node with a body in a file, as "<file> <name>" and its length in lines. */
function functionLengths (ts: typeof import('typescript'), file: string, text: string): Array<[string, number]> {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true)
  const lengths: Array<[string, number]> = []
  const visit = (node: import('typescript').Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line
      const last = source.getLineAndCharacterOfPosition(node.end).line
      const name = ts.isConstructorDeclaration(node) ? 'Constructor' : node.name?.getText(source) ?? '(arrow function)'
      lengths.push([`${file} ${name}`, last - first + 1])
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return lengths
}

t.test(`no src file over ${MAX_FILE_LINES} lines, no function over ${MAX_FUNCTION_LINES}`, async (t) => {
  const ts = (await import('typescript')).default
  const over: string[] = []
  for (const file of files(join(root, 'src'))) {
    const text = readFileSync(join(root, file), 'utf8')
    if (lineCount(text) > MAX_FILE_LINES) over.push(file)
    for (const [name, lines] of functionLengths(ts, file, text)) if (lines > MAX_FUNCTION_LINES) over.push(name)
  }
  t.same(over, [], 'over the limits')
})
