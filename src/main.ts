// The process entry point, and the only file that touches `process`: environment, signals,
// exit codes and the boot log lines. The service itself is wired in service.ts, which tests
// and benchmarks share; everything takes what it needs as arguments, so tests never exit.
import process from 'node:process'
import { pino, type Logger } from 'pino'
import { formatByteSize } from './byte-size.js'
import { loadConfig, type Config } from './config.js'
import { formatDuration } from './duration.js'
import { ConfigError, ListenError } from './errors.js'
import { closeDestination, createLogger } from './logger.js'
import { startService, type Service } from './service.js'
import { FLUSH_BUDGET_MS } from './tracing/tracing.js'

// Asynchronous writes: a request never waits for its log line to reach stdout (a slow log
// reader would otherwise stall serving), and lines written while one write is in progress go
// out together in the next. Every exit goes through exit(), which lets the writes in progress
// finish first: a flushSync() alone could overtake one, and the drain's lines, `exit` last, are
// what operators and tests follow.
const stdout = pino.destination({ dest: 1, sync: false })
// Long enough for any reader that is reading; an exit never hangs on one that has stopped.
const LOG_FLUSH_TIMEOUT_MS = 5000

async function exit (code: number): Promise<never> {
  await closeDestination(stdout, LOG_FLUSH_TIMEOUT_MS)
  process.exit(code)
}

async function main (): Promise<void> {
  const startedAt = performance.now()
  const signals = holdSignals()
  const config = readConfig()
  if (config === undefined) return await exit(1)
  const log = createLogger(config.logLevel, stdout)
  for (const warning of config.warnings) log.warn({ warning }, 'configuration warning')
  logStarting(log, config)
  const service = await start(log, config)
  if (service === undefined) return await exit(1)
  logListening(log, config, service, startedAt)
  signals.handTo(service.drain)

  const { code, reason, shutdownMs } = await service.drain.outcome
  // Exit as soon as the outcome is known: the last response has been written (or the
  // sockets destroyed); nothing else is worth waiting for, a chain probe included, but the
  // pending spans, within a bounded time. The exit code stays the drain's.
  if (service.tracing !== undefined) await flushTraces(log, service.tracing)
  log.info({ code, reason, shutdownMs: Math.round(shutdownMs) }, 'exit')
  return await exit(code)
}

/**
 * Signals are taken from the first moment: one that arrives while the app is still booting
 * is held and handed to the drain as soon as it exists, instead of killing the process with
 * Node's default (exit 143, no log line).
 */
function holdSignals (): { handTo: (drain: Service['drain']) => void } {
  const early: string[] = []
  let onSignal = (name: string): void => { early.push(name) }
  process.on('SIGTERM', () => onSignal('SIGTERM'))
  process.on('SIGINT', () => onSignal('SIGINT'))
  return {
    handTo: (drain) => {
      onSignal = (name) => drain.signal(name)
      for (const name of early) drain.signal(name)
    }
  }
}

/** The configuration from the environment, or undefined once the reason is logged. */
function readConfig (): Config | undefined {
  try {
    return loadConfig(process.env)
  } catch (err) {
    // One line that names the variable, the value and what is allowed; then refuse to boot.
    const bootLog = createLogger('info', stdout)
    if (err instanceof ConfigError) bootLog.fatal({ variable: err.variable }, err.message)
    /* c8 ignore next */ // loadConfig only throws ConfigError; anything else is a bug worth a stack
    else bootLog.fatal({ err }, 'configuration could not be read')
    return undefined
  }
}

function logStarting (log: Logger, config: Config): void {
  log.info({
    pid: process.pid,
    node: process.version,
    chain: config.chainRestUrls.join(','),
    port: config.port,
    host: config.host,
    drainAnnounce: formatDuration(config.drainAnnounceMs),
    shutdownBudget: formatDuration(config.shutdownBudgetMs),
    chainTimeout: formatDuration(config.chainTimeoutMs),
    chainConcurrency: config.chainConcurrency,
    chainMaxResponse: formatByteSize(config.chainMaxResponseBytes),
    // Where spans go, or 'off'; the headers counted, never shown (they hold credentials).
    tracing: config.tracing === undefined
      ? 'off'
      : { endpoint: config.tracing.endpoint, protocol: config.tracing.protocol, headers: Object.keys(config.tracing.headers).length, sampler: config.tracing.sampler }
  }, 'starting')
}

/** The service, listening; undefined once a failure to listen is logged. */
async function start (log: Logger, config: Config): Promise<Service | undefined> {
  try {
    return await startService({ config, logger: log })
  } catch (err) {
    /* c8 ignore next */ // only listening can fail here; anything else is a bug worth a stack
    if (!(err instanceof ListenError)) throw err
    log.fatal({ code: err.reason, port: err.port, host: err.host }, err.message)
    return undefined
  }
}

function logListening (log: Logger, config: Config, service: Service, startedAt: number): void {
  const { port, metricsPort, build } = service
  log.info({
    port,
    host: config.host,
    // Which build this replica runs (src/build-info.ts): after a rolling upgrade, the log says.
    version: build.version,
    commit: build.commit,
    buildTime: build.buildTime,
    // The metrics listener (GET /metrics), or 'off'.
    metrics: metricsPort === undefined ? 'off' : { port: metricsPort, host: config.metricsHost },
    bootMs: Math.round(performance.now() - startedAt)
  }, 'listening')
}

/** The pending spans sent within FLUSH_BUDGET_MS, and a line saying whether they all went. */
async function flushTraces (log: Logger, tracing: NonNullable<Service['tracing']>): Promise<void> {
  const flushStarted = performance.now()
  const queued = tracing.queued
  const flushed = await tracing.shutdown(FLUSH_BUDGET_MS)
  const fields = { queued, flushMs: Math.round(performance.now() - flushStarted) }
  if (flushed) log.info(fields, 'traces flushed')
  else log.warn({ ...fields, budget: formatDuration(FLUSH_BUDGET_MS) }, 'trace flush incomplete: pending spans dropped')
}

await main()
