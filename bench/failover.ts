// Chain failover, measured before choosing (issue 10): undici's BalancedPool and RetryAgent
// against edge-api's own layer (src/chain/nodes.ts behind ChainClient), with one dead
// (refusing) and one live chain node on loopback.
//
//   npx tsx bench/failover.ts
//
// For each, on a fresh dispatcher every time (BalancedPool learns from failures): 40
// sequential and 40 concurrent reads (failures, p50/max ms), and one read that the live node
// answers with a gateway error (code 13 → HTTP 500): how often the node was asked, how long
// the read took and what the caller got. Then with a node that hangs instead (accepts, never
// answers) and a 1 s read timeout: two bursts of 40 concurrent reads, one after the other.
// Prints Markdown tables.
import { BalancedPool, RetryAgent, type Dispatcher } from 'undici'
import { ChainClient } from '../src/chain/client.js'
import { startChainSimulator, type ChainSimulator } from '../harness/chain-simulator/simulator.js'

const READ = '/productscience/inference/inference/epoch_info'
const GATEWAY_500 = '/productscience/inference/inference/models_all'
const N = 40

interface Reader {
  read (path: string): Promise<unknown>
  close (): Promise<void>
}

/** An undici dispatcher read the way ChainClient reads: GET, body text, non-2xx is an error. */
function dispatcherReader (dispatcher: Dispatcher, origin: string, timeoutMs: number): Reader {
  return {
    read: async (path) => {
      const { statusCode, body } = await dispatcher.request({ origin, path, method: 'GET', signal: AbortSignal.timeout(timeoutMs) })
      const text = await body.text()
      if (statusCode >= 300) throw Object.assign(new Error(`HTTP ${statusCode}`), { code: `HTTP_${statusCode}` })
      return JSON.parse(text)
    },
    close: async () => dispatcher.close()
  }
}

function readers (dead: string, live: string, timeoutMs = 30_000): Array<{ name: string, make: () => Reader }> {
  const urls = [dead, live]
  const undici = (name: string, make: () => Dispatcher) => ({ name, make: () => dispatcherReader(make(), live, timeoutMs) })
  return [
    undici('undici BalancedPool', () => new BalancedPool(urls)),
    undici('undici RetryAgent(BalancedPool), defaults', () => new RetryAgent(new BalancedPool(urls))),
    undici('undici RetryAgent(BalancedPool), tuned', () => new RetryAgent(new BalancedPool(urls), {
      maxRetries: urls.length - 1,
      minTimeout: 1,
      timeoutFactor: 1,
      statusCodes: [],
      errorCodes: ['ECONNREFUSED', 'ECONNRESET', 'UND_ERR_SOCKET']
    })),
    {
      name: 'edge-api ChainClient',
      make: (): Reader => {
        const client = new ChainClient({ baseUrl: urls, timeoutMs, concurrency: 64, coalesce: false })
        return { read: async (path) => client.get(path), close: async () => client.close() }
      }
    }
  ]
}

/** Runs `measure` on a fresh reader and closes it. */
async function fresh<T> (make: () => Reader, measure: (reader: Reader) => Promise<T>): Promise<T> {
  const reader = make()
  try {
    return await measure(reader)
  } finally {
    await reader.close()
  }
}

interface Run { failures: number, codes: Set<string>, p50: number, max: number }

async function timed (reader: Reader, n: number, concurrent: boolean): Promise<Run> {
  const ms: number[] = []
  const codes = new Set<string>()
  let failures = 0
  const one = async (i: number): Promise<void> => {
    const started = performance.now()
    try {
      await reader.read(`${READ}?n=${i}`)
    } catch (err) {
      failures++
      // undici and Node errors carry a string code; an AbortSignal timeout is a DOMException (name).
      const { code, name } = err as { code?: unknown, name: string }
      codes.add(typeof code === 'string' ? code : name)
    }
    ms.push(performance.now() - started)
  }
  if (concurrent) await Promise.all(Array.from({ length: n }, async (_, i) => one(i)))
  else for (let i = 0; i < n; i++) await one(i)
  ms.sort((a, b) => a - b)
  return { failures, codes, p50: ms[Math.floor(ms.length / 2)] as number, max: ms.at(-1) as number }
}

async function gatewayError (reader: Reader, live: ChainSimulator): Promise<string> {
  live.resetCounts()
  const started = performance.now()
  let outcome: string
  try {
    await reader.read(GATEWAY_500)
    outcome = 'answered'
  } catch (err) {
    const e = err as { code?: string, statusCode?: number, message: string }
    outcome = e.statusCode !== undefined ? `${e.statusCode} ${JSON.stringify(e.message)}` : String(e.code ?? e.message)
  }
  return `asked ${live.count(GATEWAY_500)}×, ${(performance.now() - started).toFixed(0)} ms, ${outcome}`
}

const row = (run: Run): string => `${run.failures}/${N} failed${run.codes.size > 0 ? ` (${[...run.codes].join(', ')})` : ''}; p50 ${run.p50.toFixed(1)} ms, max ${run.max.toFixed(0)} ms`

const deadSim = await startChainSimulator()
await deadSim.refuse()
const live = await startChainSimulator()
live.fail(GATEWAY_500, 13, 'internal error')
console.log(`Node ${process.version}, undici BalancedPool/RetryAgent; dead node ${deadSim.url} (refuses), live node ${live.url}\n`)
console.log('| dispatcher | 40 sequential reads | 40 concurrent reads | one gateway 500 |')
console.log('| --- | --- | --- | --- |')
for (const { name, make } of readers(deadSim.url, live.url)) {
  const seq = await fresh(make, async (reader) => timed(reader, N, false))
  const conc = await fresh(make, async (reader) => timed(reader, N, true))
  const gw = await fresh(make, async (reader) => gatewayError(reader, live))
  console.log(`| ${name} | ${row(seq)} | ${row(conc)} | ${gw} |`)
}

const hanging = await startChainSimulator()
hanging.hang()
console.log(`\nNode ${hanging.url} hangs (listed first), node ${live.url} answers; read timeout 1 s\n`)
console.log('| dispatcher | first 40 concurrent reads | next 40 concurrent reads |')
console.log('| --- | --- | --- |')
for (const { name, make } of readers(hanging.url, live.url, 1000)) {
  const [first, next] = await fresh(make, async (reader) => [await timed(reader, N, true), await timed(reader, N, true)])
  console.log(`| ${name} | ${row(first as Run)} | ${row(next as Run)} |`)
}
await hanging.close()
await live.close()
await deadSim.close()
