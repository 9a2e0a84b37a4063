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
