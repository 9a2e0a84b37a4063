// npm run demo: two nodes of a simulated chain with realistic data and one edge-api on
// 127.0.0.1:18080 reading from both (failover), with curl lines for every route. Typing
// "restart" + Enter restarts chain node 1 (it refuses connections for 3 s): reads keep
// answering from node 2 and the log shows the node go down and come back. Ctrl-C forwards
// SIGINT to edge-api so you can watch it drain; a second Ctrl-C escalates, as in production.
import { spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import { startChainSimulator, type ChainSimulator } from '../test/fixtures/chain-simulator/simulator.js'
import { ROUTES } from '../test/fixtures/routes.js'

const PORT = process.env.EDGE_API_PORT ?? '18080'
const base = `http://127.0.0.1:${PORT}`
const nodes = await Promise.all([startChainSimulator(), startChainSimulator()])
const chainUrl = nodes.map((n) => n.url).join(',')
console.log(`chain simulator nodes on ${chainUrl}`)

const edge = spawn(process.execPath, ['--import', 'tsx', new URL('../src/main.ts', import.meta.url).pathname], {
  env: { ...process.env, CHAIN_REST_URL: chainUrl, EDGE_API_HOST: '127.0.0.1', EDGE_API_PORT: PORT },
  // Its own process group: Ctrl-C reaches only this script, which forwards it once.
  detached: true,
  stdio: ['ignore', 'pipe', 'inherit']
})

// Every GET route of the catalogue but the optional ones (not exposed here: 403), then bad
// input: a 400 that says what is wrong, before any chain request.
const examples = [
  ...ROUTES.flatMap((route) => route.example === undefined || route.kind === 'optional' ? [] : [route.example]),
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
    console.log('\nType "restart" + Enter to restart chain node 1 for 3s (reads fail over to node 2).')
    console.log('Ctrl-C to drain (edge-api keeps serving for EDGE_API_DRAIN_ANNOUNCE, 5s by default); twice to force.\n')
  }
})

// A chain node restart on demand: node 1 refuses connections for 3 s, then listens again on
// the same port. edge-api logs "chain node down" and, after its probe, "chain node up".
let restarting = false
const commands = createInterface({ input: process.stdin })
commands.on('line', (line) => {
  if (line.trim() !== 'restart' || restarting) return
  restarting = true
  const node = nodes[0] as ChainSimulator
  console.log(`chain node 1 (${node.url}) stops for 3s`)
  node.refuse()
    .then(() => new Promise((resolve) => setTimeout(resolve, 3000)))
    .then(() => node.restore())
    .then(() => console.log('chain node 1 listens again'), (err: unknown) => console.log(`chain node 1 restart failed: ${String(err)}`))
    .finally(() => { restarting = false })
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
// An open stdin would keep this script alive after edge-api has gone.
commands.close()
process.stdin.destroy()
await Promise.all(nodes.map(async (n) => n.close()))
console.log(`edge-api exited with code ${code}`)
process.exitCode = code ?? 1
