// When the chain's next block is due (docs/waiting.md), learnt from when this replica saw its
// best head rise: no answer of the gateway carries the chain's block time, and its own monotonic
// clock is what the head follower schedules on (a node's header time is another machine's clock).
// The head follower polls fast only around the moment this names, slowly otherwise.

/** Recent blocks the time per block is the median of: a few, so a change of pace is followed within a few blocks. */
export const BLOCK_SAMPLES = 8

/** How early, as a share of a block's time, the next block is looked for before it is due: blocks are not exactly regular. */
export const EARLY_SHARE = 0.05

/** A block's time as learnt: when the next one may land. Times are a Clock's ms. */
export class BlockTimes {
  /** Ms per block between successive rises seen, the last BLOCK_SAMPLES. */
  readonly #perBlock: number[] = []
  #height = 0
  #roseAt = 0
  /** The block at #height landed after this: the last look at the heads before it that did not see it. */
  #landedAfter = 0
  #quietAt = -Infinity

  /** A look at the heads that started at `at` saw no new block: the next one lands after `at`. */
  quiet (at: number): void {
    this.#quietAt = Math.max(this.#quietAt, at)
  }

  /**
   * The best head rose to `height`, seen at `at`. It landed between the last quiet look and `at`:
   * what follows is scheduled from the earlier, so a block seen late never pushes the next look
   * past the next block. A height below the last (a chain started again) starts learning anew.
   */
  rose (height: number, at: number): void {
    if (height < this.#height) this.#perBlock.length = 0
    else if (height === this.#height) return
    else if (this.#height > 0) {
      this.#perBlock.push((at - this.#roseAt) / (height - this.#height))
      if (this.#perBlock.length > BLOCK_SAMPLES) this.#perBlock.shift()
    }
    this.#landedAfter = Math.max(this.#quietAt, this.#roseAt)
    this.#height = height
    this.#roseAt = at
  }

  /** Ms per block, the median of the recent ones; undefined until two rises were seen. */
  get blockMs (): number | undefined {
    if (this.#perBlock.length === 0) return undefined
    const sorted = [...this.#perBlock].sort((a, b) => a - b)
    return sorted[Math.floor(sorted.length / 2)]
  }

  /** From when the next block may land (EARLY_SHARE of a block before it is due); undefined while blockMs is. */
  nextFrom (): number | undefined {
    const blockMs = this.blockMs
    if (blockMs === undefined) return undefined
    return this.#landedAfter + blockMs * (1 - EARLY_SHARE)
  }
}
