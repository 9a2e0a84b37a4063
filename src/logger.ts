import { once } from 'node:events'
import { pino, type DestinationStream, type Logger } from 'pino'
import type { LogLevel } from './config.js'

/**
 * JSON lines on stdout (or the given stream, for tests). Authorization and cookie headers
 * are redacted in case a proxy ever forwards them; request logs carry the request id.
 */
export function createLogger (level: LogLevel, destination?: DestinationStream): Logger {
  return pino({
    level,
    base: { service: 'edge-api' },
    redact: ['req.headers.authorization', 'req.headers.cookie'],
    timestamp: pino.stdTimeFunctions.isoTime
  }, destination)
}

/** pino's file-descriptor destination (sonic-boom). */
export type Destination = ReturnType<typeof pino.destination>

/**
 * Ends an asynchronous destination and resolves once every line handed to it has been
 * written, in order: a write still in progress finishes first, then the rest follows it. It
 * gives up after `timeoutMs` (a reader that stopped reading must not hold the exit forever).
 */
export async function closeDestination (destination: Destination, timeoutMs: number): Promise<void> {
  // An error (EPIPE: nobody reads any more) also ends the wait.
  const closed = once(destination, 'close').catch(() => undefined)
  destination.end()
  let timer: NodeJS.Timeout | undefined
  const timedOut = new Promise((resolve) => { timer = setTimeout(resolve, timeoutMs) })
  await Promise.race([closed, timedOut])
  clearTimeout(timer)
}
