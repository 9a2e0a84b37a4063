import type { Tracing, TracingOptions } from './provider.js'
import type { TracingSettings } from './settings.js'

// The one door to tracing. With tracing off nothing of OpenTelemetry is loaded: provider.ts,
// and with it the exporter's transport, is imported here, on demand, only when the settings
// turn tracing on. Its types are provider.ts's, imported as types only (erased): the arrow
// goes one way, tracing.ts → provider.ts.

export type { Tracing, TracingOptions }

/** How long the exit waits for the pending spans, after the drain (Go waited up to 10 s). */
export const FLUSH_BUDGET_MS = 5000

/** Starts tracing with `settings`, or does nothing (and loads nothing) when they are undefined (off). */
export async function startTracing (settings: TracingSettings | undefined, options: TracingOptions): Promise<Tracing | undefined> {
  if (settings === undefined) return undefined
  const { createTracing } = await import('./provider.js')
  return await createTracing(settings, options)
}
