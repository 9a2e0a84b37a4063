// The configured nodes as witnesses of each other (CometBFT's light client needs one witness to
// detect a fork; edge-api has its configured nodes): the header hash each node told at each
// height (its latest header, and the previous one its last_block_id names), and the hash
// verified at each height, from whichever node. A node that told another hash at a height
// verified is lying: a fork, or a header changed after signing. A node merely behind tells
// lower heights, never other hashes, and is not.

/** Heights remembered, newest first: a few blocks of the head poll, and a bisection's skips. */
export const KEPT_HEIGHTS = 64

export class Witnesses {
  readonly #verified = new Map<bigint, string>()
  readonly #told: Array<Map<bigint, string>>
  readonly #lying: Array<bigint | undefined>

  constructor (nodeCount: number) {
    this.#told = Array.from({ length: nodeCount }, () => new Map())
    this.#lying = new Array<bigint | undefined>(nodeCount).fill(undefined)
  }

  /** The height node `node` was caught lying at (undefined: it has not been). */
  lyingAt (node: number): bigint | undefined {
    return this.#lying[node]
  }

  /** Node `node` is lying about `height`: it is believed no more. */
  mark (node: number, height: bigint): void {
    this.#lying[node] = height
  }

  /** Node `node` told `hash` for `height`; true when a verified header at that height has another. */
  told (node: number, height: bigint, hash: Uint8Array): boolean {
    const told = hex(hash)
    keep(this.#told[node] as Map<bigint, string>, height, told)
    const verified = this.#verified.get(height)
    return verified !== undefined && verified !== told
  }

  /** The header at `height` verified with `hash`: the nodes (not yet lying) that told another hash for it. */
  verified (height: bigint, hash: Uint8Array): number[] {
    const verified = hex(hash)
    keep(this.#verified, height, verified)
    const liars: number[] = []
    this.#told.forEach((told, node) => {
      const hash = told.get(height)
      if (hash !== undefined && hash !== verified && this.#lying[node] === undefined) liars.push(node)
    })
    return liars
  }
}

/** Sets `height` in `map`, forgetting the lowest height beyond KEPT_HEIGHTS. */
function keep (map: Map<bigint, string>, height: bigint, hash: string): void {
  map.set(height, hash)
  if (map.size <= KEPT_HEIGHTS) return
  let lowest = height
  for (const h of map.keys()) if (h < lowest) lowest = h
  map.delete(lowest)
}

function hex (bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('hex').toUpperCase()
}
