import { readdirSync, readFileSync } from 'node:fs'
import { join, sep } from 'node:path'
import type { ChainField, ChainMessage, ChainVersion } from '../../src/wire/chain-version.js'
import { parseProto, type ProtoField } from './proto.js'

// From a gonka checkout's protos to the field manifest (src/wire/chain-version.ts), and the
// differences between two manifests. The manifest holds facts read from the protos (numbers,
// names, types), never their text.

/** Where a gonka checkout keeps the chain's protos. */
export const PROTO_ROOT = 'inference-chain/proto'

const SCALARS = new Set(['double', 'float', 'int32', 'int64', 'uint32', 'uint64', 'sint32', 'sint64', 'fixed32', 'fixed64', 'sfixed32', 'sfixed64', 'bool', 'string', 'bytes'])

interface Located { readonly file: string, readonly fields: ProtoField[] }

/** Every message and enum of the .proto files under `root`, by full name. */
export interface ProtoTree {
  readonly messages: ReadonlyMap<string, Located>
  readonly enums: ReadonlySet<string>
}

/** Reads every .proto file under `root` (a directory of protos, as in PROTO_ROOT). */
export function readProtoTree (root: string): ProtoTree {
  const messages = new Map<string, Located>()
  const enums = new Set<string>()
  const files = readdirSync(root, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.proto')).sort()
  for (const file of files) {
    const parsed = parseProto(readFileSync(join(root, file), 'utf8'))
    for (const message of parsed.messages) messages.set(message.name, { file: file.split(sep).join('/'), fields: message.fields })
    for (const name of parsed.enums) enums.add(name)
  }
  return { messages, enums }
}

/** The manifest entries of `names` (full message names), read from `tree`; throws naming a message it lacks. */
export function manifestOf (tree: ProtoTree, names: readonly string[]): ChainMessage[] {
  return names.map((name) => {
    const located = tree.messages.get(name)
    if (located === undefined) throw new Error(`message ${name} is not in the protos read`)
    return { file: located.file, name, fields: located.fields.map((field) => resolved(tree, name, field)) }
  })
}

function resolved (tree: ProtoTree, scope: string, field: ProtoField): ChainField {
  const type = SCALARS.has(field.type) || field.type.startsWith('map<') ? field.type : resolveName(tree, scope, field.type)
  return {
    number: field.number,
    name: field.name,
    type,
    ...(field.repeated ? { repeated: true } : {}),
    ...(tree.enums.has(type) ? { enum: true } : {})
  }
}

/** protobuf's scoping: the innermost enclosing scope that has the name; as written when none does. */
function resolveName (tree: ProtoTree, scope: string, name: string): string {
  if (name.startsWith('.')) return name.slice(1)
  const parts = scope.split('.')
  for (let n = parts.length; n >= 0; n--) {
    const candidate = [...parts.slice(0, n), name].join('.')
    if (tree.messages.has(candidate) || tree.enums.has(candidate)) return candidate
  }
  return name
}

/** What changed from `before` to `after`, one line per field or message, in the manifest's order. */
export function diffManifests (before: readonly ChainMessage[], after: readonly ChainMessage[]): string[] {
  const lines: string[] = []
  const old = new Map(before.map((m) => [m.name, m]))
  for (const message of after) {
    const was = old.get(message.name)
    if (was === undefined) {
      lines.push(`+ message ${message.name} (${message.file})`)
      continue
    }
    const fields = new Map(was.fields.map((f) => [f.name, f]))
    for (const field of message.fields) {
      const prior = fields.get(field.name)
      if (prior === undefined) lines.push(`+ ${message.name}.${field.name} = ${describe(field)}`)
      else if (describe(prior) !== describe(field)) lines.push(`~ ${message.name}.${field.name}: ${describe(prior)} → ${describe(field)}`)
      fields.delete(field.name)
    }
    for (const field of fields.values()) lines.push(`- ${message.name}.${field.name} = ${describe(field)}`)
    old.delete(message.name)
  }
  for (const message of old.values()) lines.push(`- message ${message.name}`)
  return lines
}

function describe (field: ChainField): string {
  return `${field.number} (${field.repeated === true ? 'repeated ' : ''}${field.type})`
}

/** src/wire/chain-version.ts as this script writes it. */
export function renderManifest (version: ChainVersion, messages: readonly ChainMessage[]): string {
  const entries = messages.map((m) => {
    const fields = m.fields.map((f) => `      { number: ${f.number}, name: '${f.name}', type: '${f.type}'${f.repeated === true ? ', repeated: true' : ''}${f.enum === true ? ', enum: true' : ''} }`)
    return `  {\n    file: '${m.file}',\n    name: '${m.name}',\n    fields: [\n${fields.join(',\n')}\n    ]\n  }`
  })
  return `${HEADER}
export const CHAIN_VERSION: ChainVersion = {
  version: '${version.version}',
  repository: '${version.repository}',
  commit: '${version.commit}'
}

export const CHAIN_MESSAGES: readonly ChainMessage[] = [
${entries.join(',\n')}
]
`
}

const HEADER = `// The chain version the response schemas follow, and the fields of the chain messages they
// re-shape, as read from that version's protos (${PROTO_ROOT}/ of the repository and commit
// below). Written by \`npm run chain-fields\` (docs/chain-version.md): facts about the protos,
// not their text. test/wire/chain-version.test.ts checks every field against the schemas served.

export interface ChainVersion {
  /** The chain's release, as its upgrade names it. */
  readonly version: string
  /** The public GitHub repository (owner/name) and commit the protos were read from. */
  readonly repository: string
  readonly commit: string
}

export interface ChainField {
  readonly number: number
  readonly name: string
  /** A protobuf scalar, or a message's or enum's full name. */
  readonly type: string
  readonly repeated?: true
  readonly enum?: true
}

export interface ChainMessage {
  /** The .proto file, under ${PROTO_ROOT}/. */
  readonly file: string
  /** The message's full name. */
  readonly name: string
  readonly fields: readonly ChainField[]
}
`
