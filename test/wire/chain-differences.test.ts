import { readFileSync } from 'node:fs'
import t from 'tap'
import { KNOWN_DIFFERENCES } from '../../scripts/compat/known-differences.js'
import { CHAIN_DIFFERENCES } from '../../src/wire/chain-differences.js'
import { CHAIN_MESSAGES } from '../../src/wire/chain-version.js'

// test/wire/chain-version.test.ts checks each difference against the schemas served; here, that
// each is explained, and that one Go's JSON would show is where npm run compat and the clients'
// page list it.

const clients = readFileSync(new URL('../../docs/clients.md', import.meta.url), 'utf8')

t.test('each deliberate difference names a message the manifest follows and says why', async (t) => {
  for (const d of CHAIN_DIFFERENCES) {
    t.ok(CHAIN_MESSAGES.some((m) => m.name === d.message), `${d.message} is in the manifest`)
    t.ok(d.why.length > 40, `${d.message}.${d.field} says why`)
  }
})

t.test('a difference on the wire is a known difference of npm run compat and a row of docs/clients.md', async (t) => {
  const onTheWire = CHAIN_DIFFERENCES.filter((d) => d.kind !== 'not-in-chain')
  t.ok(onTheWire.length > 0)
  for (const d of onTheWire) {
    t.ok(KNOWN_DIFFERENCES.some((k) => k.path.at(-1) === d.field), `${d.field}: scripts/compat/known-differences.ts`)
    t.match(clients, new RegExp(`^\\| \`[\\w.\\[\\]]*${d.field}\` \\|`, 'm'), `${d.field}: docs/clients.md`)
  }
})
