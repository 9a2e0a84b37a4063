import type { AddressInfo } from 'node:net'
import type { Logger } from 'pino'
import { buildApp, type EdgeApp } from './app.js'
import { ChainClient, type ChainClientOptions } from './chain/client.js'
import type { Config } from './config.js'
import { ListenError } from './errors.js'
import { Drain } from './lifecycle/drain.js'
import { httpDrainTarget } from './lifecycle/http-target.js'
import type { ServerTimeouts } from './http/server-timeouts.js'
import { Readiness } from './readiness.js'
import type { LoadShedding } from './routes/v1/index.js'
import type { VerifyTuning } from './routes/v1/verify.js'

// The one wiring of edge-api: config → chain client → readiness → app → listen → drain.
// main.ts, the tests and the benchmarks all build the service here, so what they run is what
// production runs; main.ts adds only the process around it (environment, signals, exit).

export interface ServiceOptions {
  readonly config: Config
  /** Where every log line goes; main.ts shares the logger it writes its boot lines with. */
  readonly logger: Logger
  /** Overrides of the /v1 load-shedding thresholds (tests trip them; the bench turns them off). */
  readonly loadShedding?: LoadShedding
  /** Chain client options the config has no setting for (coalescing, pool tunings, timeouts in tests). */
  readonly chain?: Partial<ChainClientOptions>
  /** The drain's windows, when a test needs them shorter than the config allows. @default the config's */
  readonly drainWindows?: { readonly announceMs: number, readonly budgetMs: number }
  /** Overrides of the server timeouts (tests shorten them). */
  readonly serverTimeouts?: Partial<ServerTimeouts>
  /** Overrides of the optional verify routes' limits (tests reach them on purpose). */
  readonly verifyTuning?: VerifyTuning
}

/** The app with the dependencies it was built on; nothing listens yet. */
export interface BuiltService {
  readonly app: EdgeApp
  readonly chain: ChainClient
  readonly readiness: Readiness
  /** Closes the app, then the chain client's connections (tests and the bench; main.ts just exits). */
  close (): Promise<void>
}

/** A listening service with its drain armed; `port` is the one bound (config port 0 included). */
export interface Service extends BuiltService {
  readonly drain: Drain
  readonly port: number
}

/** Builds everything but the socket: tests that only inject requests stop here. */
export async function buildService (options: ServiceOptions): Promise<BuiltService> {
  const { config } = options
  const chain = new ChainClient({
    baseUrl: config.chainRestUrls,
    timeoutMs: config.chainTimeoutMs,
    concurrency: config.chainConcurrency,
    maxResponseBytes: config.chainMaxResponseBytes,
    log: options.logger,
    ...options.chain
  })
  const readiness = new Readiness(chain)
  const app = await buildApp({ config, chain, readiness, logger: options.logger, loadShedding: options.loadShedding, serverTimeouts: options.serverTimeouts, verifyTuning: options.verifyTuning })
  const close = async (): Promise<void> => {
    await app.close()
    await chain.close()
  }
  return { app, chain, readiness, close }
}

/**
 * Builds the service, listens on the config's host and port and arms the drain. Nothing
 * signals the drain here: main.ts hands it SIGTERM/SIGINT, tests call drain.signal().
 * Throws ListenError, with the service closed, when the address cannot be listened on.
 */
export async function startService (options: ServiceOptions): Promise<Service> {
  const { config } = options
  const built = await buildService(options)
  const { app, chain, readiness } = built
  try {
    await app.listen({ port: config.port, host: config.host })
  } catch (err) {
    await built.close()
    throw new ListenError(config.host, config.port, err as NodeJS.ErrnoException)
  }
  // Always a TCP address here (host + port), so the port is there; with port 0 it is the one bound.
  const { port } = app.server.address() as AddressInfo
  const drain = new Drain({
    announceMs: options.drainWindows?.announceMs ?? config.drainAnnounceMs,
    budgetMs: options.drainWindows?.budgetMs ?? config.shutdownBudgetMs,
    target: httpDrainTarget({ app, readiness, chain }),
    log: options.logger
  })
  return { ...built, drain, port }
}
