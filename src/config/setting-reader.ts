import { parseByteSize } from '../byte-size.js'
import { parseDuration } from '../duration.js'
import { ConfigError } from '../errors.js'

// How a setting's text becomes a value: the kinds of value the settings take (durations,
// integers, byte sizes, booleans), each refused the same way, naming the variable and its value.
// loadConfig (src/config.ts) makes one reader over the environment; each group of settings
// (src/config/*-settings.ts, src/edge-settings.ts) reads its own variables through it.

/** The reader of the variables `Key`; a group of settings names the keys it reads. */
export interface SettingReader<Key extends string> {
  /** The variable's text, trimmed; its default when unset or empty (undefined: none). */
  readonly read: (key: Key) => string | undefined
  /** The error that refuses the variable's value, saying what is allowed. */
  readonly invalid: (key: Key, allowed: string) => ConfigError
  /** A duration, in whole ms, that `rule` accepts (it says what is wrong otherwise). */
  readonly duration: (key: Key, rule: (ms: number) => string | undefined) => number
  /** An integer from `min` to `max`; `or` names what else the variable may be. */
  readonly integer: (key: Key, min: number, max: number, or?: string) => number
  /** A byte size (16MiB) from `min` to `max`; `allowed` says what may be written. */
  readonly byteSize: (key: Key, min: number, max: number, allowed: string) => number
  readonly boolean: (key: Key) => boolean
}

/** A rule of duration(): greater than 0. */
export const positive = (ms: number): string | undefined => ms > 0 ? undefined : 'must be greater than 0'

/** The reader over `env`, with each variable's default (undefined: required, or derived). */
export function settingReader<Key extends string> (
  env: Readonly<Record<string, string | undefined>>,
  defaults: Readonly<Record<Key, string | undefined>>
): SettingReader<Key> {
  const read = (key: Key): string | undefined => {
    const value = env[key]?.trim()
    return value === '' || value === undefined ? defaults[key] : value
  }
  const invalid = (key: Key, allowed: string): ConfigError =>
    new ConfigError(key, `${key}=${JSON.stringify(env[key])} is invalid: ${allowed}`)
  // The settings of these kinds all have defaults: read() never leaves them unset.
  const duration = (key: Key, rule: (ms: number) => string | undefined): number => {
    const ms = parseDuration(read(key) as string)
    if (ms === undefined) throw invalid(key, 'must be a duration such as 250ms, 5s, 2m or 1m30s (a bare number other than 0 is not)')
    const broken = rule(ms)
    if (broken !== undefined) throw invalid(key, broken)
    return Math.round(ms)
  }
  const integer = (key: Key, min: number, max: number, or = ''): number => {
    const text = read(key) as string
    const n = Number(text)
    if (!/^\d+$/.test(text) || n < min || n > max) throw invalid(key, `must be an integer from ${min} to ${max}${or}`)
    return n
  }
  const byteSize = (key: Key, min: number, max: number, allowed: string): number => {
    const bytes = parseByteSize(read(key) as string)
    if (bytes === undefined || bytes < min || bytes > max) throw invalid(key, allowed)
    return bytes
  }
  const boolean = (key: Key): boolean => {
    const text = read(key)
    if (text !== 'true' && text !== 'false') throw invalid(key, 'must be true or false')
    return text === 'true'
  }
  return { read, invalid, duration, integer, byteSize, boolean }
}
