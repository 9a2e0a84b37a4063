// What an OTLP export costs this process, in two parts: our serializer writing 512-span batches
// (CPU per span), and one export's transport (CPU per POST of a ~110 KB batch to a collector
// stand-in in another process): the SDK's OTLP/HTTP delegate, which edge-api used until
// issue 35, against a plain keep-alive node:http POST and an undici Pool POST, the transport
// src/tracing/exporter.ts now has. Alternating rounds, medians.
//   npx tsx bench/otlp-export-cost.ts
//   BEFORE=/path/to/another/checkout/src/tracing: that checkout's serializer too, side by side
import { fork } from 'node:child_process'
import { once } from 'node:events'
import http from 'node:http'
import { convertLegacyHttpOptions, createOtlpHttpExportDelegate } from '@opentelemetry/otlp-exporter-base/node-http'
import { Pool } from 'undici'
import { newSpanId, newTraceId } from '../src/tracing/ids.js'
import { OtlpTraceSerializer } from '../src/tracing/otlp-serializer.js'
import * as records from '../src/tracing/span-records.js'
import type { SpanRecord } from '../src/tracing/span-records.js'
import { median } from './lib/stats.js'

const ROUNDS = Number(process.env.ROUNDS ?? 9)
const BATCH = 512
const resource = { 'service.name': 'edge-api', 'service.version': '0.1.0' }

type Records = typeof import('../src/tracing/span-records.js')
interface Serializer { serializeRequest (spans: readonly SpanRecord[]): Uint8Array | undefined }
interface Side { serializer: Serializer, workloads: Record<string, SpanRecord[][]> }

// 40 batches of /v1/status server spans, and 40 of a participants request's two (server, chain),
// made with the side's own span records (its serializer tells them apart by class).
let id = 0
function workloadsOf ({ ChainSpanRecord, ServerSpanRecord, SpanContext }: Records): Side['workloads'] {
  const server = (context: InstanceType<typeof SpanContext>, route: string, path: string): SpanRecord =>
    new ServerSpanRecord(context, 'GET', route, path, 'http', `r${(id++).toString(36)}`, id, id + 0.1, 200, false)
  const status = (): SpanRecord[] => Array.from({ length: BATCH }, () => server(new SpanContext(newTraceId(), newSpanId(), '', '', true), '/v1/status', '/v1/status'))
  const participants = (): SpanRecord[] => Array.from({ length: BATCH / 2 }, (_, i) => {
    const context = new SpanContext(newTraceId(), newSpanId(), '', '', true)
    const chain = new ChainSpanRecord(context, newSpanId(), '/productscience/inference/inference/participant/{}', 1, 1, false, i)
    chain.endMs = i + 1
    return [server(context, '/v1/participants/:address', `/v1/participants/gonka1${i.toString().padStart(38, '0')}`), chain]
  }).flat()
  return { status: Array.from({ length: 40 }, status), participants: Array.from({ length: 40 }, participants) }
}

const sides: Record<string, Side> = { current: { serializer: new OtlpTraceSerializer(resource, '0.1.0'), workloads: workloadsOf(records) } }
if (process.env.BEFORE !== undefined) {
  const dir = process.env.BEFORE
  const before = await import(`${dir}/otlp-serializer.ts`) as { OtlpTraceSerializer: new (r: typeof resource, v: string) => Serializer }
  sides.before = { serializer: new before.OtlpTraceSerializer(resource, '0.1.0'), workloads: workloadsOf(await import(`${dir}/span-records.ts`) as Records) }
}

/** CPU µs per span of one serializer over one workload's batches, 10 times each. */
function serialize (serializer: Serializer, batches: SpanRecord[][]): { us: number, bytes: number } {
  let bytes = 0
  const before = process.cpuUsage()
  for (let k = 0; k < 10; k++) for (const batch of batches) bytes = (serializer.serializeRequest(batch) as Uint8Array).length
  const used = process.cpuUsage(before)
  return { us: (used.user + used.system) / (10 * batches.length * BATCH), bytes: bytes / BATCH }
}

// The collector stand-in, in a child process so that its share of the work is not counted.
const collector = fork(new URL('./children/otlp-sink.ts', import.meta.url), [], { execArgv: ['--import', 'tsx'] })
const [port] = await once(collector, 'message') as [number]
const url = `http://127.0.0.1:${port}/v1/traces`
const body = new OtlpTraceSerializer(resource, '0.1.0').serializeRequest((sides.current as Side).workloads.status?.[0] as SpanRecord[]) as Uint8Array
const sdk = createOtlpHttpExportDelegate(convertLegacyHttpOptions({ url, headers: {}, timeoutMillis: 10_000, concurrencyLimit: 5 }, 'TRACES', 'v1/traces', {
  'Content-Type': 'application/x-protobuf'
}), { serializeRequest: () => body, deserializeResponse: () => ({}) }, 'otlp_http_span_exporter', { name: 'span', countItems: (spans: unknown[]) => spans.length }, undefined)
const pool = new Pool(`http://127.0.0.1:${port}`, { connections: 1 })
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
const transports: Record<string, () => Promise<void>> = {
  "the SDK's delegate (edge-api's)": async () => await new Promise((resolve) => sdk.export([body], () => resolve())),
  'node:http, keep-alive': async () => await new Promise((resolve, reject) => {
    const request = http.request(url, { method: 'POST', agent, headers: { 'content-type': 'application/x-protobuf', 'content-length': body.length } }, (res) => {
      res.resume()
      res.on('end', resolve)
    })
    request.on('error', reject)
    request.end(body)
  }),
  'undici Pool': async () => {
    const res = await pool.request({ path: '/v1/traces', method: 'POST', body, headers: { 'content-type': 'application/x-protobuf' } })
    await res.body.dump()
  }
}
/**
 * GAP_MS apart (1 ms by default; a server at 800 requests/s exports every 640 ms, its code
 * gone cold by then): CPU µs per export, the waits' own timers not counted.
 */
const GAP_MS = Number(process.env.GAP_MS ?? 1)
const EXPORTS = GAP_MS > 10 ? 15 : 200
async function exports (send: () => Promise<void>): Promise<number> {
  let us = 0
  for (let i = 0; i < EXPORTS; i++) {
    await new Promise((resolve) => setTimeout(resolve, GAP_MS))
    const before = process.cpuUsage()
    await send()
    const used = process.cpuUsage(before)
    us += used.user + used.system
  }
  return us / EXPORTS
}

const cpu = new Map<string, number[]>()
const bytes = new Map<string, number>()
const record = (name: string, value: number): void => { cpu.set(name, [...(cpu.get(name) ?? []), value]) }
for (let round = -1; round < ROUNDS; round++) {
  const names = Object.keys(sides)
  for (const name of round % 2 === 0 ? names : names.toReversed()) {
    const side = sides[name] as Side
    for (const [workload, batches] of Object.entries(side.workloads)) {
      const { us, bytes: perSpan } = serialize(side.serializer, batches)
      bytes.set(`${name}, ${workload}`, perSpan)
      if (round >= 0) record(`serializer ${name}, ${workload} spans: µs per span`, us)
    }
  }
  const ways = Object.keys(transports)
  for (const way of round % 2 === 0 ? ways : ways.toReversed()) {
    const us = await exports(transports[way] as () => Promise<void>)
    if (round >= 0) record(`transport ${way}: µs per export of ${body.length} bytes`, us)
  }
}
for (const [name, values] of cpu) console.log(`${name}: ${median(values).toFixed(name.startsWith('serializer') ? 3 : 0)} (median of ${values.length}; ${values.map((v) => v.toFixed(name.startsWith('serializer') ? 2 : 0)).join(', ')})`)
for (const [name, perSpan] of bytes) console.log(`bytes per span, ${name}: ${perSpan.toFixed(0)}`)
collector.kill()
await pool.close()
agent.destroy()
await sdk.shutdown()
