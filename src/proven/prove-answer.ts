import type { ProvingOutcome } from './answer-policy.js'
import { checkAnswer } from './check-answer.js'
import { proveRoute } from './prove-route.js'
import type { ProvenRead, StoreKey } from './prove-value.js'
import type { ProvenRoute, RouteRequest } from './proven-routes.js'

// One route's answer judged (docs/verified-reads.md, "Proven answers"): its store values
// proven from the node that served it, and the answer checked against them. Then, over the
// nodes in turn, the first answer that is not a lie: the wiring's failover. A lie (a forged
// proof, or an answer the proofs contradict) names the node that told it, which the caller
// takes out of rotation; the next node is asked. Not proven for a reason that is nobody's
// lie (not-yet, pruned) is an answer to serve, marked.

/** How one node's answer went: `lie` names what the node said that its proofs do not. */
export type AnswerProof =
  | Exclude<ProvingOutcome, { kind: 'failed' }>
  | { readonly kind: 'lie', readonly detail: string }

/** `answer` (the route's, read at `request.height` from one node) proven with `prove` (proveValue bound to that node, V and the verified app hashes). */
export async function proveAnswer (route: ProvenRoute, request: RouteRequest, answer: Record<string, any>, prove: (key: StoreKey) => Promise<ProvenRead>): Promise<AnswerProof> {
  const proof = await proveRoute(route, request, prove)
  if (proof.kind === 'forged') return { kind: 'lie', detail: `a forged proof: ${proof.reason}` }
  if (proof.kind !== 'proven') return { kind: 'unproven', reason: proof.kind }
  const check = checkAnswer(route, answer, proof.values, request)
  if (check.verdict === 'mismatch') return { kind: 'lie', detail: `the answer disagrees with its proofs at ${check.detail}` }
  // A list no proof covers (route.unproven): checked as far as proofs go, not verified whole.
  return route.unproven.length > 0 ? { kind: 'unproven', reason: 'range' } : { kind: 'verified', keys: check.keys }
}

/** One node's read: its answer, and how proving it went. */
export interface JudgedAnswer<A> {
  readonly answer: A
  readonly proof: AnswerProof
}

/**
 * Asks `nodes` in turn with `judge` until one's answer is not a lie; each liar is told to
 * `onLie` (out of rotation). A node whose read fails with an error `passesOver` (it is down,
 * timed out, refused its own proof) is passed over too, not named: the next node is asked.
 * Every node lying: `failed`, no answer, the last lie the detail; a node failed among them:
 * its error, thrown (the read failed, as an unproven one would; nothing forged is served).
 */
export async function firstHonestAnswer<A> (nodes: readonly number[], judge: (node: number) => Promise<JudgedAnswer<A>>, onLie: (node: number, detail: string) => void, passesOver: (err: unknown) => boolean = () => false): Promise<{ readonly answer: A | undefined, readonly outcome: ProvingOutcome }> {
  let detail = 'no chain node to ask'
  let failure: { readonly error: unknown } | undefined
  for (const node of nodes) {
    let judged: JudgedAnswer<A>
    try {
      judged = await judge(node)
    } catch (error) {
      if (!passesOver(error)) throw error
      failure = { error }
      continue
    }
    const { answer, proof } = judged
    if (proof.kind !== 'lie') return { answer, outcome: proof }
    onLie(node, proof.detail)
    detail = proof.detail
  }
  if (failure !== undefined) throw failure.error
  return { answer: undefined, outcome: { kind: 'failed', detail } }
}
