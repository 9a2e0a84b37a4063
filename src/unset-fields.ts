// The gateway's protojson writes an unset message or bytes field as null; the Go service's
// encoding/json with omitempty left such a key out (a nil pointer or nil slice). fromProtoJson
// passes nulls through on purpose, so routes whose legacy shape is omitempty drop them first.

/**
 * A copy of `value` without the null-valued properties of any object in it, at any depth.
 * Null array items stay: there they mean a nil entry, which Go wrote as null too.
 */
export function withoutUnsetFields (value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutUnsetFields)
  if (value === null || typeof value !== 'object') return value
  const out: Record<string, unknown> = {}
  for (const [key, field] of Object.entries(value)) {
    if (field !== null) out[key] = withoutUnsetFields(field)
  }
  return out
}
