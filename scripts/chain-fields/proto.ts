// A reader of .proto source for what the field check needs: each message's fields (number,
// name, type, repeated), by full name, and which names are enums. Not a validating parser:
// options, services, reserved ranges and extensions are skipped, not checked.

export interface ProtoField {
  readonly number: number
  readonly name: string
  /** A scalar (int64, bytes, …), `map<K, V>`, or a message's or enum's name as written. */
  readonly type: string
  readonly repeated: boolean
}

export interface ParsedMessage {
  /** Full name: package, enclosing messages, name (inference.bls.EpochBLSData). */
  readonly name: string
  readonly fields: ProtoField[]
}

export interface ParsedProto {
  readonly package: string
  readonly messages: ParsedMessage[]
  /** Full names of the enums declared. */
  readonly enums: string[]
}

const TOKEN = /\s+|\/\/[^\n]*|\/\*[\s\S]*?\*\/|"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|[A-Za-z_.][\w.]*|-?\d[\w.+-]*|[^\s]/g

/** The tokens of a .proto text, comments and white space left out. */
export function tokenize (text: string): string[] {
  return (text.match(TOKEN) ?? []).filter((token) => !/^(?:\s|\/\/|\/\*)/.test(token))
}

/** Reads one .proto file's text. Throws, naming the token, on text it cannot follow. */
export function parseProto (text: string): ParsedProto {
  const tokens = new Tokens(tokenize(text))
  const out = { package: '', messages: [] as ParsedMessage[], enums: [] as string[] }
  while (!tokens.done()) {
    const word = tokens.next()
    if (word === 'package') out.package = tokens.next()
    if (word === 'message') readMessage(tokens, out.package, out)
    else if (word === 'enum') out.enums.push(join(out.package, tokens.next()))
    if (word !== 'message') tokens.skipStatement()
  }
  return out
}

function join (scope: string, name: string): string {
  return scope === '' ? name : `${scope}.${name}`
}

function readMessage (tokens: Tokens, scope: string, out: { messages: ParsedMessage[], enums: string[] }): void {
  const name = join(scope, tokens.next())
  tokens.expect('{')
  const fields: ProtoField[] = []
  out.messages.push({ name, fields })
  readBody(tokens, name, fields, out)
}

function readBody (tokens: Tokens, scope: string, fields: ProtoField[], out: { messages: ParsedMessage[], enums: string[] }): void {
  for (let word = tokens.next(); word !== '}'; word = tokens.next()) {
    if (word === 'message') readMessage(tokens, scope, out)
    else if (word === 'oneof') {
      tokens.next()
      tokens.expect('{')
      readBody(tokens, scope, fields, out)
    } else if (word === 'enum') {
      out.enums.push(join(scope, tokens.next()))
      tokens.skipStatement()
    } else if (['option', 'reserved', 'extensions', 'extend', ';'].includes(word)) {
      if (word !== ';') tokens.skipStatement()
    } else fields.push(readField(tokens, word))
  }
}

function readField (tokens: Tokens, first: string): ProtoField {
  const repeated = first === 'repeated'
  let type = repeated || first === 'optional' || first === 'required' ? tokens.next() : first
  if (type === 'map') {
    tokens.expect('<')
    const key = tokens.next()
    tokens.expect(',')
    const value = tokens.next()
    tokens.expect('>')
    type = `map<${key}, ${value}>`
  }
  const name = tokens.next()
  tokens.expect('=')
  const number = Number(tokens.next())
  if (!Number.isInteger(number)) throw new Error(`field ${name}: its number is not an integer`)
  tokens.skipStatement()
  return { number, name, type, repeated }
}

class Tokens {
  #at = 0
  readonly #tokens: string[]
  constructor (tokens: string[]) { this.#tokens = tokens }

  done (): boolean { return this.#at >= this.#tokens.length }

  next (): string {
    const token = this.#tokens[this.#at++]
    if (token === undefined) throw new Error('unexpected end of the .proto text')
    return token
  }

  expect (token: string): void {
    const got = this.next()
    if (got !== token) throw new Error(`expected "${token}", found "${got}"`)
  }

  /** Past the statement's ";" or its {…} block, whichever ends it (nested blocks and [options] included). */
  skipStatement (): void {
    let braces = 0
    let brackets = 0
    for (;;) {
      const token = this.next()
      if (token === '[') brackets++
      else if (token === ']') brackets--
      else if (token === '{') braces++
      else if (token === '}') braces--
      if (braces === 0 && brackets === 0 && (token === ';' || token === '}')) return
    }
  }
}
