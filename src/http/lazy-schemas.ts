import { AjvCompiler } from '@fastify/ajv-compiler'
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler'
import type { FastifyServerOptions } from 'fastify'

// Fastify compiles every route's validators (Ajv) and response serializers
// (fast-json-stringify) when the app gets ready, before it listens: 35 routes × (one Ajv
// validator + one serializer per status), and Ajv and fast-json-stringify themselves loaded
// and set up, ~150 ms of CPU of every start (BENCHMARKS.md, cold start). Here each compiles on
// the first request that needs it, with Fastify's own compilers (imported here: they are
// Fastify's dependencies, at its versions) and the same options: the answers are byte for
// byte the same, the first request of a route pays its few ms.
//
// One difference from Fastify's defaults: with a compiler factory of its own, Fastify no
// longer lower-cases the property names of a `headers` schema; no route has one.

type CompilersFactory = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>
type BuildValidator = NonNullable<CompilersFactory['buildValidator']>
type BuildSerializer = NonNullable<CompilersFactory['buildSerializer']>

/** A validation function as Fastify calls it: it reads `errors` after a `false`. */
interface Validate {
  (...args: unknown[]): unknown
  errors?: unknown
}

/** The `schemaController` option: Fastify's compilers, each schema compiled on first use. */
export function lazySchemaCompilers (): NonNullable<FastifyServerOptions['schemaController']> {
  const buildValidator: BuildValidator = (externalSchemas, options) => {
    let compiler: ReturnType<BuildValidator> | undefined
    return (route) => {
      let validate: Validate | undefined
      const lazy: Validate = function (this: unknown, ...args: unknown[]) {
        compiler ??= (AjvCompiler() as BuildValidator)(externalSchemas, options)
        validate ??= compiler(route) as Validate
        const valid = validate.apply(this, args)
        lazy.errors = validate.errors
        return valid
      }
      // Fastify only calls it and reads `errors`; Ajv's other properties are never looked at.
      return lazy as unknown as ReturnType<ReturnType<BuildValidator>>
    }
  }
  const buildSerializer: BuildSerializer = (externalSchemas, options) => {
    let compiler: ReturnType<BuildSerializer> | undefined
    return (route) => {
      let serialize: ((data: unknown) => string) | undefined
      return (data: unknown) => {
        compiler ??= (SerializerSelector() as BuildSerializer)(externalSchemas, options)
        serialize ??= compiler(route)
        return serialize(data)
      }
    }
  }
  return { compilersFactory: { buildValidator, buildSerializer } }
}
