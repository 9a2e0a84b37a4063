// Canonical JSON for comparing two servers' answers: keys sorted, strings re-escaped the
// same way, and numbers kept exactly as written. JSON.parse would round 64-bit integers to
// doubles, hiding exactly the differences this tool looks for (Node 20 has no access to a
// number's source text), so this is a small parser of its own.

/** A JSON number, as its source text. */
export class RawNumber {
  readonly text: string
  constructor (text: string) {
    this.text = text
  }
}

export type Json = null | boolean | string | RawNumber | Json[] | { [key: string]: Json }

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y
// A quoted run; JSON.parse then checks its escapes and refuses raw control characters.
const STRING = /"(?:[^"\\]|\\.)*"/y
const SPACE = /[ \t\n\r]*/y

/** Parses one JSON document; throws SyntaxError on anything else. */
export function parseJson (text: string): Json {
  let at = 0
  const fail = (): never => { throw new SyntaxError(`invalid JSON at offset ${at}`) }
  const space = (): void => {
    SPACE.lastIndex = at
    SPACE.exec(text)
    at = SPACE.lastIndex
  }
  const token = (re: RegExp): string | undefined => {
    re.lastIndex = at
    const m = re.exec(text)
    if (m === null) return undefined
    at = re.lastIndex
    return m[0]
  }
  const literal = (word: string): boolean => {
    if (!text.startsWith(word, at)) return false
    at += word.length
    return true
  }
  const expect = (char: string): void => {
    space()
    if (text[at] !== char) fail()
    at++
  }
  const value = (): Json => {
    space()
    const char = text[at]
    if (char === '{') {
      at++
      const out: Record<string, Json> = {}
      space()
      if (text[at] === '}') { at++; return out }
      for (;;) {
        space()
        const key = JSON.parse(token(STRING) ?? fail()) as string
        expect(':')
        out[key] = value()
        space()
        if (text[at] === '}') { at++; return out }
        expect(',')
      }
    }
    if (char === '[') {
      at++
      const out: Json[] = []
      space()
      if (text[at] === ']') { at++; return out }
      for (;;) {
        out.push(value())
        space()
        if (text[at] === ']') { at++; return out }
        expect(',')
      }
    }
    if (char === '"') return JSON.parse(token(STRING) ?? fail()) as string
    if (literal('true')) return true
    if (literal('false')) return false
    if (literal('null')) return null
    return new RawNumber(token(NUMBER) ?? fail())
  }
  const result = value()
  space()
  if (at !== text.length) fail()
  return result
}

/** The document pretty-printed, keys sorted, one line per element: what the diff compares. */
export function canonicalLines (value: Json): string[] {
  const lines: string[] = []
  const write = (v: Json, indent: string, prefix: string, suffix: string): void => {
    if (v instanceof RawNumber) lines.push(`${indent}${prefix}${v.text}${suffix}`)
    else if (Array.isArray(v)) block(v.map((item) => ['', item]), '[', ']', indent, prefix, suffix)
    else if (v !== null && typeof v === 'object') block(Object.keys(v).sort().map((k) => [`${JSON.stringify(k)}: `, v[k] as Json]), '{', '}', indent, prefix, suffix)
    else lines.push(`${indent}${prefix}${JSON.stringify(v)}${suffix}`)
  }
  const block = (entries: Array<[string, Json]>, open: string, close: string, indent: string, prefix: string, suffix: string): void => {
    if (entries.length === 0) {
      lines.push(`${indent}${prefix}${open}${close}${suffix}`)
      return
    }
    lines.push(`${indent}${prefix}${open}`)
    entries.forEach(([key, item], i) => write(item, `${indent}  `, key, i < entries.length - 1 ? ',' : ''))
    lines.push(`${indent}${close}${suffix}`)
  }
  write(value, '', '', '')
  return lines
}

/** Every key path in the document, sorted ("a", "a.b", "list[].c"): for answers only whose shape must agree. */
export function keyPaths (value: Json): string[] {
  const paths = new Set<string>()
  const walk = (v: Json, path: string): void => {
    if (Array.isArray(v)) v.forEach((item) => walk(item, `${path}[]`))
    else if (v !== null && typeof v === 'object' && !(v instanceof RawNumber)) {
      for (const [key, item] of Object.entries(v)) {
        const next = path === '' ? key : `${path}.${key}`
        paths.add(next)
        walk(item, next)
      }
    }
  }
  walk(value, '')
  return [...paths].sort()
}
