// npm run demo: a chain simulator with realistic data and one edge-api on 127.0.0.1:18080,
// with curl lines for every route. Ctrl-C forwards SIGINT to edge-api so you can watch it
// drain; a second Ctrl-C escalates, as it would in production.
import { spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import { startChainSimulator } from '../test/fixtures/chain-simulator/simulator.js'
import { COMPLETED_REQUEST_ID } from '../test/fixtures/chain-simulator/data/bls.js'
import { POC_START } from '../test/fixtures/chain-simulator/data/epochs.js'
import { PARTICIPANTS } from '../test/fixtures/chain-simulator/data/participants.js'
import { USAGE } from '../test/fixtures/chain-simulator/data/restrictions.js'

const PORT = process.env.EDGE_API_PORT ?? '18080'
const base = `http://127.0.0.1:${PORT}`
const sim = await startChainSimulator()
console.log(`chain simulator on ${sim.url}`)

const edge = spawn(process.execPath, ['--import', 'tsx', new URL('../src/main.ts', import.meta.url).pathname], {
  env: { ...process.env, CHAIN_REST_URL: sim.url, EDGE_API_HOST: '127.0.0.1', EDGE_API_PORT: PORT },
  // Its own process group: Ctrl-C reaches only this script, which forwards it once.
  detached: true,
  stdio: ['ignore', 'pipe', 'inherit']
})

const usage = USAGE[0] as typeof USAGE[number]
const examples = [
  '/healthz', '/readyz', '/v1/status', '/v1/versions', '/v1/models', '/v1/governance/models',
  '/v1/governance/models-legacy', '/v1/pricing', '/v1/participants', `/v1/participants/${PARTICIPANTS[0].address}`,
  '/v1/epochs/latest', '/v1/epochs/current/participants', `/v1/poc-batches/${POC_START}`, '/v1/restrictions/status',
  '/v1/restrictions/exemptions', `/v1/restrictions/exemptions/${usage.exemption_id}/usage/${usage.account_address}`,
  '/v1/bls/epoch/7', '/v1/bls/epochs/7', `/v1/bls/signatures/${COMPLETED_REQUEST_ID}`,
  '/v1/bridge/addresses?chain=ethereum', '/openapi.json',
  // Bad input: a 400 that says what is wrong, before any chain request.
  '/v1/epochs/0/participants', '/v1/bls/signatures/not-hex'
]

createInterface({ input: edge.stdout }).on('line', (line) => {
  let entry: Record<string, unknown>
  try {
    entry = JSON.parse(line)
  } catch {
    console.log(line)
    return
  }
  const { time, level, msg, service, pid, hostname, ...fields } = entry
  const rest = Object.keys(fields).length > 0 ? ` ${JSON.stringify(fields)}` : ''
  console.log(`${String(time).slice(11, 23)} ${String(msg)}${rest}`)
  if (msg === 'listening') {
    console.log('\nTry:')
    for (const path of examples) console.log(`  curl -s '${base}${path}'`)
    console.log('\nCtrl-C to drain (edge-api keeps serving for EDGE_API_DRAIN_ANNOUNCE, 5s by default); twice to force.\n')
  }
})

// One Ctrl-C reaches this process several times within milliseconds (from the terminal, and
// relayed by npm and tsx), but must reach edge-api once: a second signal means "force".
let lastForwarded = 0
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (Date.now() - lastForwarded < 500) return
    lastForwarded = Date.now()
    edge.kill(signal)
  })
}
const [code] = await new Promise<[number | null]>((resolve) => edge.on('exit', (c) => resolve([c])))
await sim.close()
console.log(`edge-api exited with code ${code}`)
process.exitCode = code ?? 1
