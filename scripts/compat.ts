// npm run compat -- <reference-url> <candidate-url>: checks a new deployment against the old
// one, route by route (scripts/compat/cli.ts has the options).
import { main } from './compat/cli.js'

process.exitCode = await main(process.argv.slice(2), (text) => process.stdout.write(text))
