import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t, { type Test } from 'tap'
import { main, USAGE } from '../../scripts/chain-fields/cli.js'
import { diffManifests, manifestOf, PROTO_ROOT, readProtoTree, renderManifest } from '../../scripts/chain-fields/manifest.js'
import { CHAIN_MESSAGES, CHAIN_VERSION, type ChainMessage } from '../../src/wire/chain-version.js'

// npm run chain-fields over a gonka checkout made here: .proto text written from the manifest
// itself (so the checkout has every message the manifest follows), changed as a chain upgrade
// would change it.

const MANIFEST_FILE = fileURLToPath(new URL('../../src/wire/chain-version.ts', import.meta.url))
const ENTRY = fileURLToPath(new URL('../../scripts/chain-fields.ts', import.meta.url))
const COMMIT = 'ee730031decedd2428aa56c65084ae5ab33d9192'

const packageOf = (name: string): string => name.slice(0, name.lastIndexOf('.'))
const shortName = (name: string): string => name.slice(name.lastIndexOf('.') + 1)

/** The .proto texts of `messages`, by file: each field as written in a .proto, each enum declared. */
function protoTexts (messages: readonly ChainMessage[]): Map<string, string> {
  const files = new Map<string, string>()
  for (const message of messages) {
    const fields = message.fields.map((f) => {
      const type = /^[a-z0-9]+$/.test(f.type) ? f.type : `.${f.type}`
      const enums = f.enum === true ? `  enum ${shortName(f.type)}X { UNSET = 0; }\n` : ''
      return `${enums}  ${f.repeated === true ? 'repeated ' : ''}${type} ${f.name} = ${f.number} [(gogoproto.nullable) = false];\n`
    })
    const text = files.get(message.file) ?? `syntax = "proto3";\npackage ${packageOf(message.name)};\n\n`
    const enums = message.fields.filter((f) => f.enum === true).map((f) => `enum ${shortName(f.type)} { ${shortName(f.type).toUpperCase()}_UNSET = 0; }\n`)
    files.set(message.file, `${text}${enums.join('')}// ${message.name}\nmessage ${shortName(message.name)} {\n${fields.join('')}}\n\n`)
  }
  return files
}

/** A checkout holding `messages`' protos; removed after the test. */
function checkout (t: Test, messages: readonly ChainMessage[]): string {
  const root = mkdtempSync(join(tmpdir(), 'gonka-'))
  t.teardown(() => rmSync(root, { recursive: true, force: true }))
  for (const [file, text] of protoTexts(messages)) {
    const path = join(root, PROTO_ROOT, file)
    mkdirSync(dirname(path), { recursive: true })
    writeFileSync(path, text)
  }
  return root
}

/** The manifest with one field added to EpochBLSData, as a chain upgrade would add it. */
const UPGRADED = CHAIN_MESSAGES.map((m) => m.name !== 'inference.bls.EpochBLSData' ? m : { ...m, fields: [...m.fields, { number: 17, name: 'slot_weights', type: 'uint32', repeated: true as const }] })

function run (args: string[], manifestFile = MANIFEST_FILE): { code: number, out: string } {
  let out = ''
  const code = main(args, { write: (text) => { out += text }, manifestFile })
  return { code, out }
}

t.test('src/wire/chain-version.ts is exactly what the script writes from the manifest', async (t) => {
  t.equal(readFileSync(MANIFEST_FILE, 'utf8'), renderManifest(CHAIN_VERSION, CHAIN_MESSAGES))
})

t.test('reading a checkout gives back the manifest; a message it lacks is named', async (t) => {
  const tree = readProtoTree(join(checkout(t, CHAIN_MESSAGES), PROTO_ROOT))
  const names = CHAIN_MESSAGES.map((m) => m.name)
  t.same(manifestOf(tree, names), CHAIN_MESSAGES, 'numbers, names, types; message and enum names resolved to full names')
  t.throws(() => manifestOf(tree, ['inference.bls.SlotWeights']), /message inference\.bls\.SlotWeights is not in the protos read/)
})

t.test('type names resolve through the enclosing scopes; unknown ones stay as written', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'gonka-'))
  t.teardown(() => rmSync(root, { recursive: true, force: true }))
  writeFileSync(join(root, 'a.proto'), 'package p.q; message Outer { message Inner {} Inner a = 1; q.Other b = 2; google.protobuf.Any c = 3; .p.q.Outer d = 4; map<string, Inner> e = 5; } message Other {}')
  t.same(manifestOf(readProtoTree(root), ['p.q.Outer'])[0]?.fields.map((f) => f.type), ['p.q.Outer.Inner', 'p.q.Other', 'google.protobuf.Any', 'p.q.Outer', 'map<string, Inner>'])
})

t.test('the differences between two manifests, one line each', async (t) => {
  const [first, second] = CHAIN_MESSAGES as [ChainMessage, ChainMessage, ...ChainMessage[]]
  t.same(diffManifests(CHAIN_MESSAGES, CHAIN_MESSAGES), [])
  const changed = { ...first, fields: [{ ...first.fields[0], type: 'uint64' }, ...first.fields.slice(2)] } as ChainMessage
  t.same(diffManifests([first, second], [changed, { file: 'x.proto', name: 'p.New', fields: [] }]), [
    '~ inference.inference.EpochParams.epoch_length: 1 (int64) → 1 (uint64)',
    '- inference.inference.EpochParams.epoch_multiplier = 2 (int64)',
    '+ message p.New (x.proto)',
    '- message inference.inference.Decimal'
  ])
  t.same(diffManifests(CHAIN_MESSAGES, UPGRADED), ['+ inference.bls.EpochBLSData.slot_weights = 17 (repeated uint32)'])
})

t.test('npm run chain-fields: prints what changed and the new manifest, or writes it', async (t) => {
  const root = checkout(t, UPGRADED)
  const args = [root, '--version', 'v0.2.15', '--commit', COMMIT]
  const printed = run(args)
  t.equal(printed.code, 0)
  t.match(printed.out, /^\+ inference\.bls\.EpochBLSData\.slot_weights = 17 \(repeated uint32\)\n/)
  t.match(printed.out, "version: 'v0.2.15',\n  repository: 'gonka-ai/gonka',")
  t.match(printed.out, "      { number: 17, name: 'slot_weights', type: 'uint32', repeated: true }\n")

  const target = join(root, 'chain-version.ts')
  t.equal(run([...args, '--write', '--repository', 'kaitakuai/gonka'], target).code, 0)
  t.equal(readFileSync(target, 'utf8'), renderManifest({ version: 'v0.2.15', repository: 'kaitakuai/gonka', commit: COMMIT }, UPGRADED))

  const same = run([checkout(t, CHAIN_MESSAGES), '--version', CHAIN_VERSION.version, '--commit', COMMIT, '--write'], target)
  t.match(same.out, /^no field changed\n$/)
  t.equal(readFileSync(target, 'utf8'), renderManifest({ version: CHAIN_VERSION.version, repository: 'gonka-ai/gonka', commit: COMMIT }, CHAIN_MESSAGES))
})

t.test('--message follows one more message', async (t) => {
  const extra: ChainMessage = { file: 'inference/bls/types.proto', name: 'inference.bls.SlotWeights', fields: [{ number: 1, name: 'weight', type: 'uint32' }] }
  const { code, out } = run([checkout(t, [...CHAIN_MESSAGES, extra]), '--version', 'v0.2.15', '--commit', COMMIT, '--message', extra.name])
  t.equal(code, 0)
  t.match(out, /^\+ message inference\.bls\.SlotWeights \(inference\/bls\/types\.proto\)\n/)
})

t.test('usage errors are 2, a checkout without a followed message 1, and say why', async (t) => {
  t.same(run(['--bogus']), { code: 2, out: `Unknown option '--bogus'. To specify a positional argument starting with a '-', place it at the end of the command after '--', as in '-- "--bogus"\n${USAGE}` })
  t.match(run(['dir', '--version', 'v1']).out, /^one checkout directory, --version and --commit \(hex\) are needed\n/)
  t.equal(run(['dir', '--version', 'v1', '--commit', 'HEAD']).code, 2)
  t.equal(run(['a', 'b', '--version', 'v1', '--commit', COMMIT]).code, 2)
  const lacking = run([checkout(t, CHAIN_MESSAGES.slice(1)), '--version', 'v1', '--commit', COMMIT])
  t.same(lacking, { code: 1, out: 'message inference.inference.EpochParams is not in the protos read\n' })
  t.equal(run([join(tmpdir(), 'no-such-checkout'), '--version', 'v1', '--commit', COMMIT]).code, 1)
})

t.test('scripts/chain-fields.ts runs the tool and exits with its code', async (t) => {
  const child = spawn(process.execPath, [...process.execArgv, ENTRY, '--version'], { stdio: ['ignore', 'pipe', 'inherit'] })
  let out = ''
  child.stdout.on('data', (chunk: Buffer) => { out += chunk.toString() })
  const [code] = await once(child, 'exit') as [number]
  t.equal(code, 2)
  t.match(out, /^usage: npm run chain-fields/m)
})
