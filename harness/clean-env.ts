/** The environment a tool runs with: PATH and HOME only, so the caller's settings never leak in. */
export function cleanEnv (extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin' }
  if (process.env.HOME !== undefined) env.HOME = process.env.HOME
  return { ...env, ...extra }
}
