import type { SamplerName } from './settings.js'
import type { TraceParent } from './trace-context.js'

// The six OTEL_TRACES_SAMPLER samplers, decided once per request, before any span exists:
// the request's chain spans are its server span's children, and every one of these samplers
// gives a child its local parent's decision (parentbased_* by rule; always_on, always_off and
// traceidratio because they decide by the trace id alone, which parent and child share).

/** Whether a request's trace is sampled: `parent` is the caller's span (traceparent), undefined for a new trace with id `traceId`. */
export type Sampler = (parent: TraceParent | undefined, traceId: string) => boolean

export function createSampler (name: SamplerName, ratio: number): Sampler {
  switch (name) {
    case 'always_on': return () => true
    case 'always_off': return () => false
    case 'traceidratio': return byTraceId(ratio)
    case 'parentbased_always_on': return (parent) => parent?.sampled ?? true
    case 'parentbased_always_off': return (parent) => parent?.sampled ?? false
    case 'parentbased_traceidratio': {
      const root = byTraceId(ratio)
      return (parent, traceId) => parent === undefined ? root(undefined, traceId) : parent.sampled
    }
  }
}

/**
 * TraceIdRatioBased as the specification defines it now (W3C Trace Context level 2
 * randomness): the trace id's last 56 bits, read as a number from 0 to 1, sample when at
 * least 1 − ratio. Ratio 1 samples every trace, 0 none; the caller's flag is ignored.
 */
function byTraceId (ratio: number): Sampler {
  const threshold = 1 - ratio
  if (ratio >= 1) return () => true
  if (ratio <= 0) return () => false
  return (_parent, traceId) => parseInt(traceId.slice(18), 16) / 2 ** 56 >= threshold
}
