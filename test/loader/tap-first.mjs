// Loaded by `npm test` (test/loader/run.mjs) through NODE_OPTIONS, in every node process the
// suite starts. tap starts each test file with `--import` of @tapjs/processinfo first, and on
// Node 20 that registers module hooks on a thread of their own: from then on every ES module the
// process loads crosses to that thread and back, tap's own ~190 included. NODE_OPTIONS' `--import`
// runs before the command line's, so here tap is loaded before those hooks exist, and the test's
// own `import 'tap'` finds it loaded: 0.5–0.6 CPU-s less in every test process (a test of the app:
// 2.6 s against 3.2 s; a trivial one 0.6–0.75 against 1.13–1.21, alternating), the same coverage.
// processinfo's own record of the process is started first, as its `--import` would: its exit
// hook, registered after tap's, never ran, and the run had no coverage. Its module is not in the
// package's exports, so it is named by its place next to the `--import` entry; if that moves, every
// test process fails to start, loudly. Only in a test file's process: a child a test starts (the
// service, the compat script) must not become a TAP producer.
//
// tap keeps node_modules out of each process' coverage by its path under the project
// (`^<root>/node_modules`), but V8 names a module by its real path, and in a git worktree whose
// node_modules is a link to another checkout's that path is elsewhere: every test process then
// wrote the coverage of ~850 dependency modules and the source maps of ~300 (6.7 MB of JSON
// against 0.2 MB), and the report read all of it back. Any node_modules, wherever it lives, is
// out: src/ is what the coverage check is about. Set before processinfo's coverage module reads
// it, and inherited by every process the test starts.
//
// The same for the list of files a process loaded, which processinfo's module hook keeps for
// `tap --changed` (not used here): for each module it reads the source again, copies it to
// this thread and splits it into lines. Dependencies left out of it (tap's own exclusions kept):
// importing src/service.ts in a test process took 0.76-0.82 CPU-s against 0.88-0.96 (4 each,
// alternating), the whole process 1.6 CPU-s against 1.8.
if (process.argv[1]?.endsWith('.test.ts') === true) {
  const NODE_MODULES = /[\\/]node_modules[\\/]/
  process.env._TAPJS_PROCESSINFO_COV_EXCLUDE_ = String(NODE_MODULES)
  const loaded = /^\/(.*)\/([a-z]*)$/.exec(process.env._TAPJS_PROCESSINFO_EXCLUDE_ ?? '')
  if (loaded !== null) process.env._TAPJS_PROCESSINFO_EXCLUDE_ = String(new RegExp(`${loaded[1]}|${NODE_MODULES.source}`, loaded[2]))
  const processInfo = new URL('./get-process-info.js', import.meta.resolve('@tapjs/processinfo/import'))
  const { getProcessInfo } = await import(processInfo.href)
  getProcessInfo()
  await import('tap')
}
