// Mutation testing (docs/mutation.md). Two shared cores rule out the whole suite per mutant:
// each mutant runs only the unit tests of the module it lives in, through the project's own
// TypeScript loader without tap's runner (`node --import=strip-types <file>`: 0.6 s a file
// instead of 15 s; a failing tap file exits non-zero), one mutant at a time. MUTATE picks the modules (comma-separated
// keys of MODULES); the default is the pure modules.
const MODULES = {
  'cache/answer-key': ['test/cache/answer-key.test.ts'],
  'cache/conditional': ['test/cache/conditional.test.ts'],
  'chain/heights-state': ['test/chain/heights-state.test.ts'],
  'chain/head-table': ['test/chain/head-table.test.ts'],
  'chain/served-floor': ['test/chain/served-floor.test.ts'],
  'shared/answer-value': ['test/shared/answer-value.test.ts'],
  'lifecycle/drain': ['test/lifecycle/drain.test.ts']
}
const picked = (process.env.MUTATE ?? Object.keys(MODULES).join(',')).split(',')
const unknown = picked.filter((name) => !(name in MODULES))
if (unknown.length > 0) throw new Error(`MUTATE: unknown module(s) ${unknown.join(', ')}`)

// One report per set of modules, so that runs of different modules do not overwrite each other.
const reportName = picked.map((name) => name.replace('/', '-')).join('+')

export default {
  testRunner: 'command',
  commandRunner: {
    command: picked.flatMap((name) => MODULES[name])
      .map((file) => `node --import=./test/loader/strip-types.mjs ${file}`).join(' && ')
  },
  mutate: picked.map((name) => `src/${name}.ts`),
  ignorePatterns: ['dist', 'bench/results', 'reports', '.tap', 'docs'],
  // One mutant at a time by default: the cores are shared (STRYKER_CONCURRENCY raises it).
  concurrency: Number(process.env.STRYKER_CONCURRENCY ?? 1),
  timeoutMS: 20000,
  reporters: ['clear-text', 'progress', 'json', 'html'],
  jsonReporter: { fileName: `reports/mutation/${reportName}.json` },
  htmlReporter: { fileName: `reports/mutation/${reportName}.html` },
  tempDirName: '.stryker-tmp'
}
