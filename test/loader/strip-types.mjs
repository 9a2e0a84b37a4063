// The suite runs the TypeScript sources as Node 22+ runs them (--experimental-strip-types):
// the types are erased to whitespace by amaro, the same eraser Node ships, so every line and
// column stays where it is in the .ts file. That is what makes it cheap (no type checker, no
// emit, no source map: the typecheck is `npm run typecheck`'s job) and what keeps coverage
// exact: V8's offsets in the erased text are offsets in the source. tsconfig's
// `erasableSyntaxOnly` guarantees there is nothing (enum, namespace, parameter property)
// erasing cannot express. Loaded with `node --import`, in every test process tap starts.
import { register } from 'node:module'

register('./strip-types-hooks.mjs', import.meta.url)
