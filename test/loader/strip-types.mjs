// The suite runs the TypeScript sources as Node 22+ runs them (--experimental-strip-types):
// the types are erased to whitespace by amaro, the same eraser Node ships, so every line and
// column stays where it is in the .ts file. That is what makes it cheap (no type checker, no
// emit, no source map: the typecheck is `npm run typecheck`'s job) and what keeps coverage
// exact: V8's offsets in the erased text are offsets in the source. tsconfig's
// `erasableSyntaxOnly` guarantees there is nothing (enum, namespace, parameter property)
// erasing cannot express. Loaded with `node --import`, in every test process tap starts.
import { register } from 'node:module'

// A test file's first import is tap, whose own ES modules are about 190 files: loaded here, before the hooks
// are registered, they do not cross to the hooks' thread and back (8–12% of a test process'
// CPU, measured with process.cpuUsage() at exit over four test files, alternating). The test's
// own `import 'tap'` then finds them loaded. Only in a tap test process: a child a test starts
// with this loader (scripts/compat.ts, the clock's child) must not become a TAP producer.
if (process.argv[1]?.endsWith('.test.ts') === true) await import('tap')
register('./strip-types-hooks.mjs', import.meta.url)
