import type { LoadOptions, LoadResult } from '../children/load.js'
import { Child } from './ipc.js'
import type { OpenLoopOptions, OpenLoopResult } from './open-loop.js'

export type { LoadOptions, LoadResult, OpenLoopOptions, OpenLoopResult }

/** The autocannon child: one process for the whole run, so its start-up is paid once. */
export class Load {
  readonly #child: Child

  private constructor (child: Child) {
    this.#child = child
  }

  static async start (): Promise<Load> {
    return new Load(await Child.start('load'))
  }

  run (options: LoadOptions): Promise<LoadResult> {
    return this.#child.call<LoadResult>('run', options)
  }

  /** Open loop: a fixed schedule of requests, whatever the server answers (see open-loop.ts). */
  open (options: OpenLoopOptions): Promise<OpenLoopResult> {
    return this.#child.call<OpenLoopResult>('open', options)
  }

  /** The generator's process, e.g. to pin it to a CPU. */
  get pid (): number {
    return this.#child.pid
  }

  stop (): Promise<void> {
    return this.#child.stop()
  }
}

/** 2xx answers of a run. */
export function okAnswers (r: OpenLoopResult): number {
  let n = 0
  for (const [code, count] of Object.entries(r.statusCodes)) if (code.startsWith('2')) n += count
  return n
}

/** Share of a run's scheduled requests not answered 2xx (errors, shed, unanswered). */
export function notOk (r: OpenLoopResult): number {
  return 1 - okAnswers(r) / Math.max(1, r.scheduled)
}
