import { execFile } from 'node:child_process'
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import t, { type Test } from 'tap'
import { BUILD_INFO_FILE, loadBuildInfo, type BuildInfo } from '../src/build-info.js'
import { loadConfig } from '../src/config.js'
import { createLogger } from '../src/logger.js'
import { startService } from '../src/service.js'
import { startChainSimulator } from '../harness/chain-simulator/simulator.js'
import { LogLines } from '../harness/log-lines.js'
import { sampleValue } from '../harness/prometheus.js'

// The build identity as the image gets it: the Dockerfile's own RUN line (read from the
// Dockerfile, run with /bin/sh as `docker build` runs it, its build arguments in the
// environment) writes dist/build-info.json in a directory laid out as the image's /app; the
// service started on that dist/ names the build on /v1/versions and in edge_api_build_info,
// over real sockets. No Docker engine here: test/deploy/dockerfile.test.ts checks the rest.

const ROOT = new URL('../', import.meta.url)
const PACKAGE_VERSION = (JSON.parse(readFileSync(new URL('package.json', ROOT), 'utf8')) as { version: string }).version
const COMMIT = '3f9a1c0e5b7d2f4a6c8e0b1d3f5a7c9e1b3d5f70'
const BUILD_TIME = '2026-12-01T09:30:00Z'

/** The build stage's build arguments (name → default) and the RUN line that writes the file. */
function dockerfileBuildIdentity (): { args: Record<string, string>, run: string } {
  const lines = readFileSync(new URL('Dockerfile', ROOT), 'utf8').replace(/\\\n/g, ' ').split('\n').map((l) => l.trim())
  const args: Record<string, string> = {}
  let run: string | undefined
  for (const line of lines) {
    const arg = /^ARG (GIT_COMMIT|BUILD_TIME)=(.*)$/.exec(line)
    if (arg !== null) args[arg[1] as string] = (arg[2] as string).replace(/^"(.*)"$/, '$1')
    if (line.startsWith('RUN ') && line.includes(BUILD_INFO_FILE)) run = line.slice(4)
  }
  if (run === undefined) throw new Error(`no RUN line writes ${BUILD_INFO_FILE}`)
  return { args, run }
}

/** A directory laid out as the image's /app after the build: package.json and dist/ with the written file. */
async function imageApp (t: Test, buildArgs: Record<string, string>): Promise<URL> {
  const app = mkdtempSync(join(tmpdir(), 'edge-api-image-'))
  t.teardown(() => rmSync(app, { recursive: true, force: true }))
  copyFileSync(new URL('package.json', ROOT), join(app, 'package.json'))
  mkdirSync(join(app, 'dist'))
  const { args, run } = dockerfileBuildIdentity()
  // The build stage's WORKDIR is /app; docker runs a shell-form RUN as /bin/sh -c.
  await promisify(execFile)('/bin/sh', ['-c', run], { cwd: app, env: { PATH: process.env.PATH, ...args, ...buildArgs } })
  return pathToFileURL(join(app, 'dist/'))
}

async function serve (t: Test, build: BuildInfo): Promise<{ origin: string, metrics: string }> {
  const sim = await startChainSimulator()
  const config = loadConfig({ CHAIN_REST_URL: sim.url, EDGE_API_HOST: '127.0.0.1', EDGE_API_PORT: '0', EDGE_API_LOG_LEVEL: 'warn' })
  const service = await startService({ config, logger: createLogger(config.logLevel, new LogLines().stream), metricsPort: 0, build })
  t.teardown(async () => {
    await service.close()
    await sim.close()
  })
  return { origin: `http://127.0.0.1:${service.port}`, metrics: `http://127.0.0.1:${service.metricsPort as number}/metrics` }
}

t.test('an image built with GIT_COMMIT and BUILD_TIME names its build on /v1/versions and in edge_api_build_info', async (t) => {
  const build = loadBuildInfo(await imageApp(t, { GIT_COMMIT: COMMIT, BUILD_TIME }))
  t.same(build, { version: PACKAGE_VERSION, commit: COMMIT, buildTime: BUILD_TIME })
  const { origin, metrics } = await serve(t, build)
  const versions = await (await fetch(`${origin}/v1/versions`)).json() as { api_version: unknown }
  t.same(versions.api_version, { application_name: 'edge-api', version: PACKAGE_VERSION, commit: COMMIT, build_time: BUILD_TIME })
  t.equal(sampleValue(await (await fetch(metrics)).text(), 'edge_api_build_info', { version: PACKAGE_VERSION, commit: COMMIT }), 1)
})

t.test('an image built without the arguments: the version, and an empty commit and time', async (t) => {
  const build = loadBuildInfo(await imageApp(t, {}))
  t.same(build, { version: PACKAGE_VERSION, commit: '', buildTime: '' })
  const { origin, metrics } = await serve(t, build)
  const versions = await (await fetch(`${origin}/v1/versions`)).json() as { api_version: { commit: string } }
  t.equal(versions.api_version.commit, '')
  t.equal(sampleValue(await (await fetch(metrics)).text(), 'edge_api_build_info', { version: PACKAGE_VERSION, commit: '' }), 1)
})

t.test('without the file (tests from src/, a build outside the Dockerfile), or with keys missing: ""', async (t) => {
  t.same(loadBuildInfo(), { version: PACKAGE_VERSION, commit: '', buildTime: '' }, 'src/ has no build-info.json')
  const dist = await imageApp(t, {})
  writeFileSync(new URL(BUILD_INFO_FILE, dist), '{"commit":7}\n')
  t.same(loadBuildInfo(dist), { version: PACKAGE_VERSION, commit: '', buildTime: '' })
})
