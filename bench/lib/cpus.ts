// CPU placement for a benchmark that runs a server, the router in front of it and the clients
// on one machine. In a deployment the router and the clients have cores (machines) of their
// own; on a shared two-core box they take CPU from the server they measure, so a router that
// refuses tens of thousands of requests a second at once looks as if it cost the server
// throughput. `taskset` (util-linux) pins each side to its own core.
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'

export const TASKSET = '/usr/bin/taskset'

/** Two disjoint CPU lists for taskset -c: the server's, and the router's and clients'. */
export interface CpuSplit {
  readonly server: string
  readonly clients: string
}

/**
 * The first two CPUs this process may run on, one for the server and one for the rest, or
 * why that is not possible (fewer than two CPUs, no taskset): then nothing is pinned.
 */
export function cpuSplit (pid: number): CpuSplit | { readonly reason: string } {
  if (!existsSync(TASKSET)) return { reason: `${TASKSET} missing` }
  const cpus = affinity(pid)
  if (cpus.length < 2) return { reason: `only ${cpus.length} CPU${cpus.length === 1 ? '' : 's'} available` }
  return { server: String(cpus[0]), clients: String(cpus[1]) }
}

/** Pins every thread of a running process (threads it starts later inherit the mask). */
export function pin (pid: number, cpus: string): void {
  execFileSync(TASKSET, ['-a', '-p', '-c', cpus, String(pid)], { stdio: 'ignore' })
}

/** The CPUs a process may run on, from `taskset -p -c` ("pid 1's current affinity list: 0-2,5"). */
export function affinity (pid: number): number[] {
  const out = execFileSync(TASKSET, ['-p', '-c', String(pid)], { encoding: 'utf8' })
  const list = out.slice(out.lastIndexOf(':') + 1).trim()
  const cpus: number[] = []
  for (const part of list.split(',')) {
    const [from, to] = part.split('-').map(Number) as [number, number | undefined]
    for (let cpu = from; cpu <= (to ?? from); cpu++) cpus.push(cpu)
  }
  return cpus
}
