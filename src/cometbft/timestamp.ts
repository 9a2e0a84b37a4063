// An RFC 3339 time read to the nanosecond, as google.protobuf.Timestamp {seconds, nanos}.
// A vote's timestamp is inside what its validator signed, nanoseconds included, so it must
// be read exactly: Date keeps milliseconds only, and would turn year 1 (Go's zero time,
// which absent signatures carry) into 1901.

export interface Timestamp {
  /** Seconds since 1970-01-01T00:00:00Z; negative before. */
  readonly seconds: number
  /** 0 to 999 999 999. */
  readonly nanos: number
}

/** Go's zero time.Time, 0001-01-01T00:00:00Z. */
export const ZERO_TIME: Timestamp = { seconds: -62135596800, nanos: 0 }

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:Z|([+-])(\d{2}):(\d{2}))$/

/** The time `text` names, or undefined when it is not an RFC 3339 time Go would accept. */
export function parseTimestamp (text: string): Timestamp | undefined {
  const m = RFC3339.exec(text)
  if (m === null) return undefined
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number]
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month) || hour > 23 || minute > 59 || second > 59) return undefined
  let offset = 0
  if (m[8] !== undefined) {
    const offsetHours = Number(m[9])
    const offsetMinutes = Number(m[10])
    if (offsetHours > 23 || offsetMinutes > 59) return undefined
    offset = (m[8] === '-' ? -1 : 1) * (offsetHours * 3600 + offsetMinutes * 60)
  }
  return {
    seconds: daysFromCivil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second - offset,
    nanos: Number((m[7] ?? '').padEnd(9, '0'))
  }
}

/** Days from 1970-01-01 to a proleptic Gregorian date (H. Hinnant's days_from_civil). */
function daysFromCivil (year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year
  const era = Math.floor(y / 400)
  const yearOfEra = y - era * 400
  const dayOfYear = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear
  return era * 146097 + dayOfEra - 719468
}

function daysInMonth (year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28
  return [4, 6, 9, 11].includes(month) ? 30 : 31
}

/** The time as nanoseconds since 1970, exactly: what light-client time checks compare. */
export function timestampNanos (time: Timestamp): bigint {
  return BigInt(time.seconds) * 1_000_000_000n + BigInt(time.nanos)
}
