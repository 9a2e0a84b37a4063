import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { CHAIN_MESSAGES } from '../../src/wire/chain-version.js'
import { diffManifests, manifestOf, PROTO_ROOT, readProtoTree, renderManifest } from './manifest.js'

export const USAGE = `usage: npm run chain-fields -- <gonka-checkout> --version <vX.Y.Z> --commit <sha> [options]

Reads the chain's protos of a gonka checkout (${PROTO_ROOT}/), prints how the fields of the
messages edge-api re-shapes differ from src/wire/chain-version.ts, and writes the new manifest
(to the file with --write, else to the output). Then npm test names every field to serve or list
as a deliberate difference (docs/chain-version.md).

options:
  --version <v>        the chain release the checkout is (for example v0.2.15)
  --commit <sha>       the commit checked out (git rev-parse HEAD)
  --repository <o/n>   the public repository it came from (default gonka-ai/gonka)
  --message <name>     also follow this message (full name; repeatable)
  --write              write src/wire/chain-version.ts instead of printing it
`

export interface Io {
  readonly write: (text: string) => void
  /** The manifest file --write replaces. */
  readonly manifestFile: string
}

/** Runs the tool; returns the exit code (0 done, 1 the protos lack a message, 2 usage). */
export function main (args: readonly string[], io: Io): number {
  let parsed
  try {
    parsed = parseArgs({
      args: [...args],
      allowPositionals: true,
      options: {
        version: { type: 'string' },
        commit: { type: 'string' },
        repository: { type: 'string', default: 'gonka-ai/gonka' },
        message: { type: 'string', multiple: true, default: [] },
        write: { type: 'boolean', default: false }
      }
    })
  } catch (err) {
    io.write(`${(err as Error).message}\n${USAGE}`)
    return 2
  }
  const { values, positionals } = parsed
  const { version, commit, repository } = values
  if (positionals.length !== 1 || version === undefined || commit === undefined || !/^[0-9a-f]{7,40}$/.test(commit)) {
    io.write(`one checkout directory, --version and --commit (hex) are needed\n${USAGE}`)
    return 2
  }
  const names = [...new Set([...CHAIN_MESSAGES.map((m) => m.name), ...values.message])]
  let messages
  try {
    messages = manifestOf(readProtoTree(join(positionals[0] as string, PROTO_ROOT)), names)
  } catch (err) {
    io.write(`${(err as Error).message}\n`)
    return 1
  }
  const changes = diffManifests(CHAIN_MESSAGES, messages)
  io.write(changes.length === 0 ? 'no field changed\n' : `${changes.join('\n')}\n`)
  const text = renderManifest({ version, repository, commit }, messages)
  if (values.write) writeFileSync(io.manifestFile, text)
  else io.write(text)
  return 0
}
