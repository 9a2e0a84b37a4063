// npm run chain-fields -- <gonka-checkout> --version <v> --commit <sha> [--write]: reads the
// chain's protos and updates the field manifest (scripts/chain-fields/cli.ts has the options).
import { fileURLToPath } from 'node:url'
import { main } from './chain-fields/cli.js'

const manifestFile = fileURLToPath(new URL('../src/wire/chain-version.ts', import.meta.url))
process.exitCode = main(process.argv.slice(2), { write: (text) => process.stdout.write(text), manifestFile })
