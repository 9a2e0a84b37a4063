import type { LoadOptions, LoadResult } from '../children/load.js'
import { Child } from './ipc.js'

export type { LoadOptions, LoadResult }

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

  stop (): Promise<void> {
    return this.#child.stop()
  }
}
