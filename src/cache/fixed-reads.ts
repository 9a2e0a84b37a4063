import type { ChainReader } from '../chain/types.js'
import type { AnswerCache } from './answer-cache.js'
import { isFixedRead } from './route-classes.js'

type Query = Record<string, string>

/**
 * A reader that keeps the chain reads a height decides once and for all (isFixedRead: a
 * block, a validator set, a store query at a given height) in the answer cache, so a later
 * answer, at a later head, reads them from there: the epoch participants' proof, block and
 * validator set cost the chain one read per epoch, not one per block. Kept as their JSON
 * bytes, bounded with the answers; parsed for each use, so no answer shares (or mutates)
 * another's objects. Errors are never kept: a block not produced yet is asked again.
 */
export function withFixedReads (reader: ChainReader, cache: AnswerCache): ChainReader {
  return {
    get height () { return reader.height },
    async get (path: string, query?: Query): Promise<unknown> {
      if (!isFixedRead(path, query)) return reader.get(path, query)
      const key = `chain ${path} ${JSON.stringify(query ?? {})}`
      const kept = cache.get(key)
      if (kept !== undefined) return JSON.parse(kept.body.toString('utf8'))
      const value = await reader.get(path, query)
      cache.set(key, { body: Buffer.from(JSON.stringify(value)), contentType: 'application/json', etag: '' })
      return value
    }
  }
}
