import type { FastifyRequest } from 'fastify'
import type { ParamSpelling } from './route-classes.js'

// An answer's key: its route, its parameters as the route reads them, and the query parameters
// its schema declares (others cannot change the answer). Spellings the route reads as one value
// (`/v1/poc-batches/5`, `/05`, `/+5`) are one key: one chain read, one ETag, one entry in the
// cache and the pool's store, so a client cycling spellings cannot bust either (review A9).

const INTEGER = /^[+-]?[0-9]+$/

/** A parameter's value as its route reads it, in one spelling. */
export function canonicalValue (value: string, spelling: ParamSpelling | undefined): string {
  if (spelling === 'hex') return value.toLowerCase()
  // "current" and the like stay as they are; only numbers have other spellings.
  if (spelling === 'integer' && INTEGER.test(value)) return BigInt(value).toString()
  return value
}

export type KeyOf = (request: FastifyRequest) => string

/**
 * The key builder of one route, bound when the route is added: `spellings` names the
 * parameters that have several spellings (ROUTE_CLASSES), `declared` the query parameters.
 */
export function answerKeyOf (route: string, spellings: Readonly<Record<string, ParamSpelling>>, declared: readonly string[]): KeyOf {
  const names = [...declared].sort()
  return (request) => {
    const params = request.params as Record<string, string>
    const path = Object.keys(params).sort().map((name) => `${name}=${canonicalValue(params[name] as string, spellings[name])}`).join('&')
    const query = request.query as Record<string, unknown>
    return `${route} ${path} ${names.map((name) => `${name}=${String(query[name])}`).join('&')}`
  }
}

/** The key of an answer read at `height`; a key without one stands for no single block (an answer fixed by its path). */
export function keyAt (base: string, height: number | undefined): string {
  return height === undefined ? base : `${base}@${height}`
}
