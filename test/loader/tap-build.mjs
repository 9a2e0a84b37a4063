// `npm test` runs this before tap: it builds tap's Test class with the plugins package.json
// configures, when the installed build has others. `npm ci` installs tap built with its
// default plugins, @tapjs/typescript (tsx) and @tapjs/mock among them. tap notices and
// rebuilds, but only after it has taken the test processes' loaders from the old build: on a
// fresh clone's first run every test process also loaded tsx's and mock's hooks, about 1.5 s of
// CPU each (the suite took 390 s there against 255 s on the run after it, same clone). The
// check is tap's own (@tapjs/run's run.js: the built signature against the configured one).
import { spawnSync } from 'node:child_process'
import { TapConfig } from '@tapjs/config'
import { signature } from '@tapjs/test'

const config = await TapConfig.load()
if (signature !== config.pluginSignature) {
  const build = spawnSync('npx', ['tap', 'build'], { stdio: 'inherit' })
  if (build.status !== 0) throw new Error(`tap build failed (status ${build.status}, signal ${build.signal})`)
  console.log('tap built with the configured plugins')
}
