import { existsSync, readFileSync } from 'node:fs'

// Which build is running: the package version, and the commit and time the image was built
// from. The Dockerfile writes the last two, from its GIT_COMMIT and BUILD_TIME build
// arguments, into build-info.json next to the compiled code (dist/); nothing reads a .git at
// run time. Without that file (a build outside the Dockerfile, tests from src/) both are "".

export interface BuildInfo {
  /** package.json's version. */
  readonly version: string
  /** The git commit the image was built from, as given to the build; "" when unknown. */
  readonly commit: string
  /** When the image was built, as given to the build (RFC 3339 by convention); "" when unknown. */
  readonly buildTime: string
}

/** The file the Dockerfile writes; its keys as on the wire of /v1/versions. */
export const BUILD_INFO_FILE = 'build-info.json'

interface BuildInfoFile { commit?: unknown, build_time?: unknown }

/**
 * Reads the build identity once, at start: `dir` is where the compiled modules are (this
 * module's own directory by default), so dist/build-info.json in the image.
 */
export function loadBuildInfo (dir = new URL('.', import.meta.url)): BuildInfo {
  const file = new URL(BUILD_INFO_FILE, dir)
  const written = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) as BuildInfoFile | null : null
  const text = (value: unknown): string => (typeof value === 'string' ? value : '')
  return { version: nearestPackageVersion(dir), commit: text(written?.commit), buildTime: text(written?.build_time) }
}

/**
 * The version in the nearest package.json at or above `dir`: edge-api's own, whether this
 * module runs from src/ or dist/ (the image copies package.json beside dist/).
 */
function nearestPackageVersion (dir: URL): string {
  const file = new URL('package.json', dir)
  if (existsSync(file)) return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version
  const parent = new URL('..', dir)
  /* c8 ignore next */ // edge-api always runs inside its package
  if (parent.href === dir.href) throw new Error('no package.json above the running module')
  return nearestPackageVersion(parent)
}
