// Mutation testing (docs/mutation.md). Two shared cores rule out the whole suite per mutant:
// each mutant runs only the unit tests of the module it lives in, through the project's own
// TypeScript loader without tap's runner (`node --import=strip-types <file>`: 0.6 s a file
// instead of 15 s; a failing tap file exits non-zero), one mutant at a time. MUTATE picks the modules (comma-separated
// keys of MODULES); the default is the modules whose tests need neither redis-server nor an app.
const MODULES = {
  'cache/answer-cache': ['test/cache/answer-cache.test.ts'],
  'cache/answer-key': ['test/cache/answer-key.test.ts'],
  'cache/conditional': ['test/cache/conditional.test.ts'],
  'cache/fixed-reads': ['test/cache/fixed-reads.test.ts'],
  // Its own test (http-cache.process.test.ts) starts a redis-server and takes 20 s: the in-process app's
  // tests, and each route's class as a client sees it (route-classes.test.ts).
  'cache/http-cache': ['test/cache/routes-cached.test.ts', 'test/cache/route-classes.test.ts'],
  'cache/min-height': ['test/cache/min-height.test.ts'],
  'cache/pin': ['test/cache/pin.test.ts'],
  // isFixedRead is tested with the fixed reads it decides (fixed-reads.test.ts).
  'cache/route-classes': ['test/cache/route-classes.test.ts', 'test/cache/fixed-reads.test.ts'],
  'chain/head-poll-scheduler': ['test/chain/head-poll-scheduler.test.ts'],
  'chain/head-table': ['test/chain/head-table.test.ts'],
  'chain/heights': ['test/chain/heights.test.ts'],
  'chain/heights-state': ['test/chain/heights-state.test.ts'],
  'chain/served-floor': ['test/chain/served-floor.test.ts'],
  'lifecycle/drain': ['test/lifecycle/drain.test.ts'],
  'lifecycle/http-target': ['test/lifecycle/http-target.test.ts'],
  // These tests start their own redis-server (harness/redis-server.ts). The lists of results a
  // module exports are its metrics' label values: test/metrics/shared-tier.test.ts checks them.
  'shared/answer-value': ['test/shared/answer-value.test.ts'],
  'shared/deadline': ['test/shared/deadline.test.ts'],
  'shared/head-hints': ['test/shared/head-hints.test.ts', 'test/metrics/shared-tier.test.ts'],
  'shared/rate-counter': ['test/shared/rate-counter.test.ts'],
  'shared/shared-answers': ['test/shared/shared-answers.test.ts', 'test/metrics/shared-tier.test.ts'],
  'shared/shared-tier': ['test/shared/shared-tier.test.ts'],
  'shared/store': ['test/shared/store.test.ts', 'test/metrics/shared-tier.test.ts'],
  'shared/subscription': ['test/shared/subscription.test.ts']
}
const PURE = ['cache/answer-key', 'cache/conditional', 'cache/pin', 'cache/route-classes', 'chain/head-poll-scheduler',
  'chain/head-table', 'chain/heights-state', 'chain/served-floor', 'lifecycle/drain', 'shared/answer-value', 'shared/deadline']
const picked = (process.env.MUTATE ?? PURE.join(',')).split(',')
const unknown = picked.filter((name) => !(name in MODULES))
if (unknown.length > 0) throw new Error(`MUTATE: unknown module(s) ${unknown.join(', ')}`)

// A killed mutant's test file stops at its first failure (TAP_BAIL), except where the tests
// start a redis-server: a bail skips the teardown that stops it.
const STARTS_REDIS = /^test\/shared\/(head-hints|rate-counter|shared-answers|shared-tier|store|subscription)\./
const testCommand = (file) => `${STARTS_REDIS.test(file) ? '' : 'TAP_BAIL=1 '}node --import=./test/loader/strip-types.mjs ${file}`

// One report per set of modules, so that runs of different modules do not overwrite each other.
const reportName = picked.map((name) => name.replace('/', '-')).join('+')

export default {
  testRunner: 'command',
  commandRunner: {
    command: picked.flatMap((name) => MODULES[name]).map(testCommand).join(' && ')
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
