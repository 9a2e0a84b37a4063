import t from 'tap'
import { request } from 'undici'
import { prepareRefusal, refusalBody, REFUSALS, refusalMessage, type Refusal } from '../../src/admission/refusals.js'
import { ChainBusyError } from '../../src/errors.js'
import { overCap } from '../../src/waiting/wait-quota.js'
import { directives, renderRouterConfig } from '../../harness/router-config.js'
import { buildTestApp } from '../fixtures/app.js'

// The one list of refusals (src/admission/refusals.ts) and its copies: the router's rendered
// configuration (compose/router/render.sh, a shell script in the router's image, keeps its
// own), the chain queue's error, the waiting caps' error. Each fails naming the refusal whose
// copy disagrees.

/** Every per-client rule and the optional routes' 403 on, so each of the router's refusals is rendered. */
const ALL_ROUTER_REFUSALS = {
  EDGE_API_ROUTER_INIT_STATE: 'on',
  EDGE_API_ROUTER_CLIENT_MAX_CONNECTIONS: '100',
  EDGE_API_ROUTER_CLIENT_MAX_REQUESTS: '1000',
  EDGE_API_ROUTER_QUEUE_LENGTH: '100',
  EDGE_API_EXPOSE_OPTIONAL_ROUTES: 'false'
}

interface RouterRule {
  readonly held: boolean
  readonly status: number
  readonly retryAfterS: number | undefined
  /** The JSON body's message, or the stream's retry: in ms. */
  readonly body: string
  /** The rule's condition, `{ path /v1/events }` taken out (a stream's refusal pairs with the JSON one beside it). */
  readonly condition: string
}

/** The router's refusals: every http-request rule that answers with a status of its own. */
function routerRules (config: string): { json: RouterRule[], streams: RouterRule[] } {
  const rules = directives(config).flatMap((line) => {
    const rule = /^http-request (tarpit|deny|return) (?:deny_)?status (\d+) (.*?)string (['"])(.*)\4 if (.*)$/.exec(line)
    if (rule === null) return []
    const [, action, status, headers, , body, condition] = rule as unknown as [string, string, string, string, string, string, string]
    const retryAfter = /hdr Retry-After (\d+)/.exec(headers)?.[1]
    return [{ held: action === 'tarpit', status: Number(status), retryAfterS: retryAfter === undefined ? undefined : Number(retryAfter), body, condition: condition.replace('{ path /v1/events } ', '') }]
  })
  return { json: rules.filter((rule) => rule.body.startsWith('{')), streams: rules.filter((rule) => !rule.body.startsWith('{')) }
}

/** What the router's copy of a refusal must be: the catalogue's, with "the service" for whose cap is full. */
function expected (refusal: Refusal): Omit<RouterRule, 'condition'> {
  return {
    held: refusal.held,
    status: refusal.status,
    retryAfterS: typeof refusal.retryAfterS === 'number' ? refusal.retryAfterS : undefined,
    body: JSON.stringify({ message: refusalMessage(refusal, 'the service') })
  }
}

t.test('the router\'s refusals are the catalogue\'s: status, Retry-After, held (tarpit), body; none of its own', async (t) => {
  const { json } = routerRules(renderRouterConfig(ALL_ROUTER_REFUSALS))
  const rendered = json.map(({ condition, ...rule }) => rule)
  const routers = Object.entries(REFUSALS).filter(([, refusal]) => refusal.site !== 'replica')
  t.ok(routers.length >= 5, `${routers.length} refusals made by the router`)
  const renderedText = rendered.map((rule) => JSON.stringify(rule))
  const catalogued = routers.map(([name, refusal]) => [name, JSON.stringify(expected(refusal))] as const)
  for (const [name, copy] of catalogued) t.ok(renderedText.includes(copy), `${name}: the router's copy agrees with ${copy}`)
  for (const rule of renderedText) t.ok(catalogued.some(([, copy]) => copy === rule), `the router's ${rule} is in src/admission/refusals.ts`)
})

t.test('a refused stream at the router follows its JSON refusal: retry: its Retry-After, held alike', async (t) => {
  const { json, streams } = routerRules(renderRouterConfig(ALL_ROUTER_REFUSALS))
  t.ok(streams.length >= 2, 'the waiting lane\'s and the per-client limits\' stream refusals are rendered')
  for (const stream of streams) {
    const beside = json.find((rule) => rule.condition === stream.condition)
    t.ok(beside, `a JSON refusal on "${stream.condition}"`)
    t.equal(stream.status, 200, 'an EventSource comes back from a 200 that ends, not from a 429')
    t.equal(stream.body, `retry: ${(beside?.retryAfterS ?? 0) * 1000}\\n\\n`, `retry: the Retry-After of "${stream.condition}"`)
    t.equal(stream.held, beside?.held, 'tarpitted as its JSON refusal is')
  }
})

t.test('the replica\'s copies: the chain queue\'s error, the waiting caps\' 429', async (t) => {
  t.equal(new ChainBusyError().message, REFUSALS.chainQueue.message, 'src/errors.ts ChainBusyError')
  t.equal(new ChainBusyError().headers?.['retry-after'], String(REFUSALS.chainQueue.retryAfterS))
  const cap = overCap('client')
  t.equal(cap.statusCode, REFUSALS.waitingFull.status)
  t.equal(cap.message, refusalMessage(REFUSALS.waitingFull, 'this client'))
  t.same(cap.headers, { 'retry-after': String(REFUSALS.waitingFull.retryAfterS) })
})

t.test('a refusal prepared: its status, Retry-After when it has one, the JSON body built once', async (t) => {
  const headers: Record<string, string> = {}
  let status = 0
  const reply = { code (s: number) { status = s; return this }, header (name: string, value: string) { headers[name] = value; return this } }
  const body = prepareRefusal(reply as never, REFUSALS.blockedRoute)
  t.equal(status, 403)
  t.same(headers, { 'content-type': 'application/json; charset=utf-8' }, 'a blocked route says no Retry-After: it would not help')
  t.equal(body, refusalBody(REFUSALS.blockedRoute.message), 'the same Buffer for the same message')
  prepareRefusal(reply as never, REFUSALS.fairShare)
  t.equal(headers['retry-after'], '1')
})

t.test('over a real socket, a replica\'s refusals are their entries: a blocked route, a client over its limit', async (t) => {
  const { app } = await buildTestApp(t, { env: { EDGE_API_BLOCKED_ROUTES: 'participants', EDGE_API_RATE_LIMIT: '2/1m' } })
  const base = await app.listen({ host: '127.0.0.1', port: 0 })
  const blocked = await request(`${base}/v1/participants`)
  t.equal(blocked.statusCode, REFUSALS.blockedRoute.status)
  t.same(await blocked.body.json(), { message: REFUSALS.blockedRoute.message })
  let limited = await request(`${base}/v1/status`)
  for (let i = 0; i < 5 && limited.statusCode !== 429; i++) {
    await limited.body.dump()
    limited = await request(`${base}/v1/status`)
  }
  t.equal(limited.statusCode, REFUSALS.rateLimit.status, 'the limit of 2 a minute reached within a few requests')
  t.same(await limited.body.json(), { message: refusalMessage(REFUSALS.rateLimit, '2 requests per 1m') })
  t.ok(Number(limited.headers['retry-after']) >= 1, 'Retry-After from the bucket')
})
