// The Go edge-api's bad-input messages, so a client that parses them keeps working. Its
// generated binders (zpoken/gonka common/queryapi/gen/server.gen.go@ef1a5efd, oapi-codegen
// v2.6.0) answer 400 "Invalid format for parameter <p>: <err>", where <err> comes from
// github.com/oapi-codegen/runtime v1.3.0 (edge-api/go.mod@89ff8bdb): BindStringToObject's
// "error binding string parameter: <strconv error>" for integers, and
// BindQueryParameterWithOptions' "query parameter '<p>' is required".

/** The envelope of every binder failure. */
export function invalidParameter (name: string, reason: string): string {
  return `Invalid format for parameter ${name}: ${reason}`
}

/** A required query parameter that is absent. */
export function missingQueryParameter (name: string): string {
  return invalidParameter(name, `query parameter '${name}' is required`)
}

export type GoInteger = 'int64' | 'uint64'

const SYNTAX: Readonly<Record<GoInteger, RegExp>> = { int64: /^[+-]?\d+$/, uint64: /^\d+$/ }
const RANGE: Readonly<Record<GoInteger, readonly [bigint, bigint]>> = {
  int64: [-(2n ** 63n), 2n ** 63n - 1n],
  uint64: [0n, 2n ** 64n - 1n]
}

/** The value of a decimal Go integer, or undefined when strconv would refuse it. */
export function parseGoInteger (text: string, kind: GoInteger): bigint | undefined {
  if (!SYNTAX[kind].test(text)) return undefined
  const n = BigInt(text)
  const [min, max] = RANGE[kind]
  return n < min || n > max ? undefined : n
}

/**
 * What the binder says when `text` is not a decimal `kind`, e.g.
 * `Invalid format for parameter id: error binding string parameter: strconv.ParseUint:
 * parsing "abc": invalid syntax`.
 */
export function goIntegerError (name: string, text: string, kind: GoInteger): string {
  const fn = kind === 'uint64' ? 'ParseUint' : 'ParseInt'
  const reason = SYNTAX[kind].test(text) ? 'value out of range' : 'invalid syntax'
  return invalidParameter(name, `error binding string parameter: strconv.${fn}: parsing ${goQuote(text)}: ${reason}`)
}

const ESCAPES: Readonly<Record<string, string>> = {
  '\x07': '\\a', '\b': '\\b', '\f': '\\f', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\v': '\\v', '"': '\\"', '\\': '\\\\'
}

/** Go's strconv.Quote: a double-quoted Go string literal; control characters escaped. */
export function goQuote (text: string): string {
  let out = '"'
  for (const char of text) {
    const code = char.codePointAt(0) as number
    const escape = ESCAPES[char]
    if (escape !== undefined) out += escape
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, '0')}`
    else if (code >= 0x80 && code < 0xa0) out += `\\u${code.toString(16).padStart(4, '0')}`
    else out += char
  }
  return `${out}"`
}
