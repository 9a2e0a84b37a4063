import type { AddressInfo } from 'node:net'
import type { Logger } from 'pino'
import { buildApp, type EdgeApp } from './app.js'
import { loadBuildInfo, type BuildInfo } from './build-info.js'
import { AnswerCache } from './cache/answer-cache.js'
import { ChainClient, type ChainClientOptions, type VerificationOptions } from './chain/client.js'
import type { Config } from './config.js'
import { ListenError } from './errors.js'
import { Drain } from './lifecycle/drain.js'
import { httpDrainTarget } from './lifecycle/http-target.js'
import type { ServerTimeouts } from './http/server-timeouts.js'
import type { Metrics } from './metrics/registry.js'
import { MetricsListener } from './metrics/server.js'
import { Readiness } from './readiness.js'
import { strictFreshness } from './light/freshness.js'
import { PoolRateCounter } from './shared/rate-counter.js'
import { openSharedTier, type SharedTier } from './shared/shared-tier.js'
import { FLUSH_BUDGET_MS, startTracing, type Tracing } from './tracing/tracing.js'
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
  /** The metrics port, when a test or the bench needs any free one (0) or metrics on despite the config. @default the config's */
  readonly metricsPort?: number
  /** Which build this is. @default what the image build wrote beside the compiled code (loadBuildInfo) */
  readonly build?: BuildInfo
}

/** The app with the dependencies it was built on; nothing listens yet. */
export interface BuiltService {
  readonly app: EdgeApp
  readonly chain: ChainClient
  readonly readiness: Readiness
  /** The service's metrics; undefined when they are off (EDGE_API_METRICS_PORT=off). */
  readonly metrics: Metrics | undefined
  /** Which build this is: /v1/versions, edge_api_build_info and main.ts's `listening` line name it. */
  readonly build: BuildInfo
  /** The tracer; undefined when tracing is off (EDGE_API_OTEL_ENABLED unset), as by default. main.ts flushes it at exit. */
  readonly tracing: Tracing | undefined
  /** The shared tier (docs/shared-tier.md); undefined without EDGE_API_REDIS_URL, as by default. */
  readonly shared: SharedTier | undefined
  /** The answer cache; undefined when EDGE_API_CACHE_SIZE is 0. */
  readonly cache: AnswerCache | undefined
  /** Closes the app, then the chain client's connections, then flushes the traces (tests and the bench; main.ts just exits). */
  close (): Promise<void>
}

/** A listening service with its drain armed; `port` is the one bound (config port 0 included). */
export interface Service extends BuiltService {
  readonly drain: Drain
  readonly port: number
  /** The metrics listener's bound port; undefined when metrics are off. */
  readonly metricsPort: number | undefined
}

/** Builds everything but the sockets: tests that only inject requests stop here. */
export async function buildService (options: ServiceOptions): Promise<BuiltService> {
  const { config } = options
  const build = options.build ?? loadBuildInfo()
  // One registry per service (never prom-client's global one): several services in one
  // process (tests, the bench) keep their own series. None at all when metrics are off, and
  // prom-client is not even loaded then: the registry is imported only when they are on.
  const metrics = (options.metricsPort ?? config.metricsPort) === undefined ? undefined : new (await import('./metrics/registry.js')).Metrics(build)
  // With tracing off this loads nothing of OpenTelemetry and adds no hook.
  const tracing = await startTracing(config.tracing, {
    log: options.logger,
    onDrop: metrics === undefined ? undefined : (reason, spans) => metrics.spansDropped(reason, spans)
  })
  // Asked only when a read is hedged: the app below serves them, so it exists by then.
  const chain = createChainClient(options, metrics, tracing, () => app.shedding.active)
  // The shared tier is no readiness dependency: it connects in the background, and the replica serves on its own until it does.
  const shared = config.redisUrl === undefined
    ? undefined
    : await openSharedTier({ url: config.redisUrl, password: config.redisPassword, secret: config.redisSecret, commandTimeoutMs: config.redisTimeoutMs, maxLag: config.maxNodeLag, heads: chain.heads, chain, format: `${build.version}+${build.commit}+${config.verification.mode}`, shareAnswers: config.cacheBytes > 0, log: options.logger, metrics })
  // Neither is the cache: it only ever answers what the chain answered.
  const cache = config.cacheBytes === 0 ? undefined : new AnswerCache({ maxBytes: config.cacheBytes, observer: metrics, pool: shared?.answers })
  const readiness = new Readiness(chain, { onProbe: metrics === undefined ? undefined : (result) => metrics.readinessProbe(result), unverified: config.verification.mode === 'strict' ? strictFreshness(chain) : undefined })
  // Read at scrape time only, once the app below exists.
  if (metrics !== undefined) watchGauges(metrics, { readiness, chain, cache, activeClients: () => app.fairAdmission.share.activeClients })
  const app = await buildApp({ config, chain, readiness, logger: options.logger, build, loadShedding: { maxEventLoopDelay: config.shedDelayMs, ...options.loadShedding }, serverTimeouts: options.serverTimeouts, verifyTuning: options.verifyTuning, metrics, tracing, cache, rateCounter: shared === undefined ? undefined : new PoolRateCounter(shared.store, shared.network) })
  const close = async (): Promise<void> => {
    await app.close()
    await chain.close()
    await shared?.close()
    await tracing?.shutdown(FLUSH_BUDGET_MS)
  }
  return { app, chain, readiness, metrics, build, tracing, shared, cache, close }
}

/** The chain client on the config's nodes and limits, reporting to the metrics and the tracer. */
function createChainClient (options: ServiceOptions, metrics: Metrics | undefined, tracing: Tracing | undefined, shedding: () => boolean): ChainClient {
  const { config } = options
  return new ChainClient({
    baseUrl: config.chainRestUrls,
    timeoutMs: config.chainTimeoutMs,
    concurrency: config.chainConcurrency,
    maxResponseBytes: config.chainMaxResponseBytes,
    maxNodeLag: config.maxNodeLag,
    headMaxAgeMs: config.headMaxAgeMs,
    log: options.logger,
    observer: metrics,
    tracer: tracing?.chain,
    hedging: { budget: config.hedgeBudget, minDelayMs: config.hedgeMinDelayMs, shedding },
    verification: verificationOptions(config, options.logger),
    ...options.chain
  })
}

/** The verified-height cursor's settings when EDGE_API_VERIFICATION is not off (the trust root is then always set). */
function verificationOptions (config: Config, log: Logger): VerificationOptions | undefined {
  const { mode, trustRoot, trustingPeriodMs, rpcUrls } = config.verification
  return mode === 'off' || trustRoot === undefined ? undefined : { root: trustRoot, trustingPeriodMs, log, rpcUrls }
}

/** The gauges the metrics read at scrape time, from the parts that hold them. */
function watchGauges (metrics: Metrics, parts: { readiness: Readiness, chain: ChainClient, cache: AnswerCache | undefined, activeClients: () => number }): void {
  const { readiness, chain, cache, activeClients } = parts
  metrics.watch({
    draining: () => readiness.draining,
    chainQueueDepth: () => chain.queued,
    chainNodesUp: () => chain.nodesUp,
    chainHeads: () => chain.nodesUp.map((_up, i) => chain.heads.head(i)),
    chainLags: () => chain.heads.lags,
    servedHeight: () => chain.heads.served,
    heightsKnown: () => chain.heads.known,
    chainNodesLying: () => chain.nodesLying,
    verifiedHeight: () => chain.verified?.height,
    cacheBytes: () => cache?.bytes ?? 0,
    cacheEntries: () => cache?.entries ?? 0,
    activeClients
  })
}

/**
 * Connections the kernel may hold for the replica to accept (capped by net.core.somaxconn,
 * 4,096 on current Linux). Node's default, 511, drops the rest of a storm of new connections,
 * which connect only on TCP's retry, 1, 3 or 7 s later, and come back in waves (measured: a
 * client opening 4,096 connections at once overflowed the queue 1,075 times; none with this).
 */
export const LISTEN_BACKLOG = 4096

/**
 * Builds the service, listens on the config's host and port (and the metrics listener on its
 * own) and arms the drain. Nothing signals the drain here: main.ts hands it SIGTERM/SIGINT,
 * tests call drain.signal(). The drain never touches the metrics listener: it answers until
 * the process exits (or close()).
 * Throws ListenError, with the service closed, when an address cannot be listened on.
 */
export async function startService (options: ServiceOptions): Promise<Service> {
  const { config } = options
  const built = await buildService(options)
  const { app, chain, readiness, metrics } = built
  const listener = metrics === undefined ? undefined : new MetricsListener(metrics)
  const close = async (): Promise<void> => {
    await listener?.close()
    await built.close()
  }
  try {
    await app.listen({ port: config.port, host: config.host, backlog: LISTEN_BACKLOG })
  } catch (err) {
    await close()
    throw new ListenError(config.host, config.port, err as NodeJS.ErrnoException)
  }
  let metricsPort: number | undefined
  try {
    metricsPort = await listener?.listen(config.metricsHost, options.metricsPort ?? config.metricsPort as number)
  } catch (err) {
    await close()
    throw err
  }
  // Always a TCP address here (host + port), so the port is there; with port 0 it is the one bound.
  const { port } = app.server.address() as AddressInfo
  const drain = new Drain({
    announceMs: options.drainWindows?.announceMs ?? config.drainAnnounceMs,
    budgetMs: options.drainWindows?.budgetMs ?? config.shutdownBudgetMs,
    target: httpDrainTarget({ app, readiness, chain }),
    log: options.logger
  })
  return { ...built, close, drain, port, metricsPort }
}
