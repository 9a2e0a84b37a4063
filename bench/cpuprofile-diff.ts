// Where two servers' time goes, per request: two V8 CPU profiles (node --cpu-prof) of
// dist/main.js with tracing on and off, loaded in alternating rounds so the machine's noise
// lands on both, each with the number of requests it answered. Each sample goes to the
// nearest frame of our code or of a package (node_modules, dist/); native work (writev, GC)
// and Node internals called from no package keep their function's name. Times are wall clock while busy: on a loaded machine they
// include time the process waited for a core, on both sides alike. BENCHMARKS.md, "Tracing cost".
//   npx tsx bench/cpuprofile-diff.ts on.cpuprofile <requests> off.cpuprofile <requests>
import { readFileSync } from 'node:fs'

interface CallFrame { functionName: string, url: string }
interface ProfileNode { id: number, callFrame: CallFrame, children?: number[] }
interface Profile { nodes: ProfileNode[], samples: number[], timeDeltas: number[] }

/** Microseconds of samples per place, idle left out. */
function byPlace (file: string): Map<string, number> {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]))
  const parents = new Map<number, number>()
  for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id)
  const out = new Map<string, number>()
  profile.samples.forEach((id, i) => {
    const leaf = (nodes.get(id) as ProfileNode).callFrame
    if (leaf.functionName === '(idle)') return
    let place = `(${leaf.functionName})`
    // Native work (a socket write, GC) keeps its own name: the kernel's share shows apart.
    for (let at: number | undefined = leaf.url === '' ? undefined : id; at !== undefined; at = parents.get(at)) {
      const { url } = (nodes.get(at) as ProfileNode).callFrame
      const match = /node_modules\/((?:@[^/]+\/)?[^/]+)|\/dist\/(.+)$/.exec(url)
      if (match !== null) {
        place = match[1] ?? `dist/${match[2] as string}`
        break
      }
    }
    out.set(place, (out.get(place) ?? 0) + (profile.timeDeltas[i] ?? 0))
  })
  return out
}

const [onFile, onRequests, offFile, offRequests] = process.argv.slice(2)
if (offRequests === undefined) throw new Error('usage: npx tsx bench/cpuprofile-diff.ts on.cpuprofile <requests> off.cpuprofile <requests>')
const on = byPlace(onFile as string)
const off = byPlace(offFile as string)
const perRequest = (map: Map<string, number>, place: string, requests: string) => (map.get(place) ?? 0) / Number(requests)
const rows = [...new Set([...on.keys(), ...off.keys()])].map((place) => {
  const a = perRequest(on, place, onRequests as string)
  const b = perRequest(off, place, offRequests)
  return { place, on: a, off: b, added: a - b }
}).sort((x, y) => y.added - x.added)
const sum = (pick: (r: typeof rows[number]) => number) => rows.reduce((n, r) => n + pick(r), 0)
console.log(`busy µs per request: on ${sum((r) => r.on).toFixed(1)}, off ${sum((r) => r.off).toFixed(1)}, added ${sum((r) => r.added).toFixed(1)}`)
console.log('added    on       off      place')
for (const r of rows.slice(0, 25)) console.log(`${r.added.toFixed(2).padStart(6)} ${r.on.toFixed(2).padStart(8)} ${r.off.toFixed(2).padStart(8)}  ${r.place}`)
