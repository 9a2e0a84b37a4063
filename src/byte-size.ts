// Byte sizes as operators write them in config.env: "65536", "64KiB", "16MiB".

const UNIT_BYTES: Readonly<Record<string, number>> = { '': 1, KiB: 1024, MiB: 1024 * 1024 }

/** Parses a whole number of bytes with an optional KiB/MiB suffix; undefined when malformed. */
export function parseByteSize (text: string): number | undefined {
  const match = /^(\d{1,15})(KiB|MiB)?$/.exec(text)
  if (match === null) return undefined
  return Number(match[1]) * (UNIT_BYTES[match[2] ?? ''] as number)
}

/** Formats bytes with the largest unit that divides them exactly: 16MiB, 64KiB, 1000. */
export function formatByteSize (bytes: number): string {
  for (const [unit, size] of [['MiB', 1024 * 1024], ['KiB', 1024]] as const) {
    if (bytes >= size && bytes % size === 0) return `${bytes / size}${unit}`
  }
  return String(bytes)
}
