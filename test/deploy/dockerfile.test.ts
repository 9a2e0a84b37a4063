import { readFileSync } from 'node:fs'
import t from 'tap'

// No Docker engine here: the image is checked statically, instruction by instruction.
const read = (name: string): string => readFileSync(new URL(`../../${name}`, import.meta.url), 'utf8')

interface Instruction { readonly op: string, readonly args: string }
interface Stage { readonly from: string, readonly name: string | undefined, readonly instructions: Instruction[] }

function parseDockerfile (text: string): { args: Record<string, string>, stages: Stage[] } {
  const args: Record<string, string> = {}
  const stages: Stage[] = []
  const logical = text.replace(/\\\n/g, ' ').split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'))
  for (const line of logical) {
    const [, op = '', rest = ''] = /^(\S+)\s*(.*)$/.exec(line) ?? []
    const upper = op.toUpperCase()
    if (upper === 'FROM') {
      const [, image = '', name] = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(rest) ?? []
      stages.push({ from: image.replace(/\$\{(\w+)\}/g, (_m, v: string) => args[v] ?? ''), name, instructions: [] })
    } else if (upper === 'ARG' && stages.length === 0) {
      const [name = '', value = ''] = rest.split('=')
      args[name] = value
    } else {
      stages.at(-1)?.instructions.push({ op: upper, args: rest })
    }
  }
  return { args, stages }
}

const { stages } = parseDockerfile(read('Dockerfile'))
const runtime = stages.at(-1) as Stage
const only = (stage: Stage, op: string): Instruction[] => stage.instructions.filter((i) => i.op === op)

t.test('multi-stage: built with dev dependencies, run with production dependencies only', async (t) => {
  t.ok(stages.length >= 2, 'more than one stage')
  const build = stages.find((s) => s.instructions.some((i) => i.op === 'RUN' && /npm run build/.test(i.args)))
  t.ok(build, 'a stage compiles TypeScript')
  t.ok(build?.instructions.some((i) => i.op === 'RUN' && /npm ci(?!.*--omit=dev)/.test(i.args)), 'with dev dependencies')
  const deps = stages.find((s) => s.instructions.some((i) => i.op === 'RUN' && /npm ci .*--omit=dev/.test(i.args)))
  t.ok(deps, 'a stage installs production dependencies only')
  const copies = only(runtime, 'COPY')
  t.ok(copies.some((c) => c.args === `--from=${deps?.name as string} /app/node_modules ./node_modules`), 'the runtime takes node_modules from the production-only stage')
  t.ok(copies.some((c) => c.args === `--from=${build?.name as string} /app/dist ./dist`), 'and dist/ from the build')
  t.notOk(copies.some((c) => /\bsrc\b|tsconfig/.test(c.args)), 'no sources or build config in the runtime')
  t.notOk(runtime.instructions.some((i) => i.op === 'RUN' && /npm (ci|install)/.test(i.args)), 'nothing installed in the runtime stage itself')
  for (const stage of stages.filter((s) => s.instructions.some((i) => i.op === 'RUN' && /npm ci/.test(i.args)))) {
    const firstCi = stage.instructions.findIndex((i) => i.op === 'RUN' && /npm ci/.test(i.args))
    t.ok(stage.instructions.slice(0, firstCi).some((i) => i.op === 'COPY' && /\.npmrc/.test(i.args)), `${stage.name ?? 'stage'}: .npmrc (ignore-scripts=true) is in place before npm ci`)
  }
  t.match(read('.npmrc'), /^ignore-scripts=true$/m)
})

t.test('a current Node LTS base', async (t) => {
  for (const stage of stages) {
    const major = Number(/^node:(\d+)/.exec(stage.from)?.[1])
    t.ok(major >= 22 && major % 2 === 0, `${stage.from} is an LTS line (even major, 22 or newer)`)
  }
})

t.test('runtime: non-root, the process itself receives signals, port, healthcheck', async (t) => {
  const users = only(runtime, 'USER')
  t.equal(users.length, 1)
  t.notOk(['root', '0', '0:0'].includes(users[0]?.args ?? 'root'), 'runs as a non-root user')
  t.same(JSON.parse(only(runtime, 'CMD')[0]?.args ?? 'null'), ['node', 'dist/main.js'], 'exec-form CMD: no shell or npm between Docker and node')
  t.same(only(runtime, 'ENTRYPOINT'), [], 'no ENTRYPOINT wrapper')
  t.same(only(runtime, 'EXPOSE').map((i) => i.args), ['18080'])
  const health = only(runtime, 'HEALTHCHECK')[0]?.args ?? ''
  const cmd = JSON.parse(/CMD\s+(\[.*\])$/.exec(health)?.[1] ?? 'null') as string[] | null
  t.equal(cmd?.[0], 'node', 'the healthcheck needs no tool the slim image lacks (no curl, no wget)')
  t.match(cmd?.[2], /\/healthz/, 'liveness: /healthz never touches the chain')
  t.ok(only(runtime, 'COPY').some((c) => c.args === 'package.json ./'), 'package.json ("type": "module") is in the image')
})

t.test('.dockerignore keeps the context to what the build copies', async (t) => {
  const patterns = read('.dockerignore').split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'))
  t.equal(patterns[0], '*', 'everything is excluded first')
  const allowed = new Set(patterns.slice(1).map((p) => p.replace(/^!/, '')))
  t.ok(patterns.slice(1).every((p) => p.startsWith('!')), 'then an allow-list')
  const fromContext = stages.flatMap((s) => only(s, 'COPY')).filter((c) => !c.args.startsWith('--from'))
  for (const copy of fromContext) {
    const sources = copy.args.split(/\s+/).slice(0, -1)
    for (const source of sources) t.ok(allowed.has(source), `${source} is in the build context`)
  }
  for (const never of ['node_modules', 'dist', '.git', 'test', '.tap', 'config.env']) t.notOk(allowed.has(never), `${never} stays out`)
})

t.test('build identity: GIT_COMMIT and BUILD_TIME are build arguments written beside dist/, never read from a .git', async (t) => {
  const build = stages.find((s) => s.instructions.some((i) => i.op === 'RUN' && /npm run build/.test(i.args))) as Stage
  const at = (predicate: (i: Instruction) => boolean): number => build.instructions.findIndex(predicate)
  const compile = at((i) => i.op === 'RUN' && /npm run build/.test(i.args))
  const write = at((i) => i.op === 'RUN' && /dist\/build-info\.json/.test(i.args))
  for (const name of ['GIT_COMMIT', 'BUILD_TIME']) {
    const declared = at((i) => i.op === 'ARG' && i.args.split('=')[0] === name)
    t.ok(declared > compile, `ARG ${name} after the compile: a new commit keeps the compiled layers cached`)
    t.ok(declared < write, 'and before the RUN that writes it (test/build-info.test.ts runs that line)')
  }
  t.ok(only(runtime, 'COPY').some((c) => c.args === `--from=${build.name as string} /app/dist ./dist`), 'the runtime takes dist/ with the file in it')
  t.notOk(stages.some((s) => s.instructions.some((i) => /\.git\b|\bgit /.test(i.args))), 'no git, no .git, in any stage')
})
