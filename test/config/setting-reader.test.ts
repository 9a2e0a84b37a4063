import t from 'tap'
import { positive, settingReader } from '../../src/config/setting-reader.js'
import { ConfigError } from '../../src/errors.js'

// The kinds of value a setting takes, each refused naming the variable and the value given.

const DEFAULTS = { WAIT: '5s', COUNT: '3', SIZE: '1KiB', ON: 'false', NAME: undefined }

/** The ConfigError `read` throws (its variable and message), or undefined. */
function refused (read: () => unknown): { variable: string, message: string } | undefined {
  try {
    read()
  } catch (err) {
    if (err instanceof ConfigError) return { variable: err.variable, message: err.message }
    throw err
  }
  return undefined
}

t.test('read: trimmed; unset or blank is the default (or undefined without one)', async (t) => {
  const settings = settingReader({ WAIT: ' 2s ', COUNT: '  ' }, DEFAULTS)
  t.equal(settings.read('WAIT'), '2s')
  t.equal(settings.read('COUNT'), '3')
  t.equal(settings.read('NAME'), undefined)
})

t.test('each kind: its value, or a refusal naming the variable, the value and what is allowed', async (t) => {
  const settings = settingReader({ WAIT: '1m30s', COUNT: '7', SIZE: '2MiB', ON: 'true' }, DEFAULTS)
  t.same([settings.duration('WAIT', positive), settings.integer('COUNT', 1, 9), settings.byteSize('SIZE', 0, 4 * 1024 * 1024, 'x'), settings.boolean('ON')],
    [90_000, 7, 2 * 1024 * 1024, true])
  const bad = settingReader({ WAIT: '0', COUNT: '10', SIZE: '2MB', ON: 'yes' }, DEFAULTS)
  t.same(refused(() => bad.duration('WAIT', positive)), { variable: 'WAIT', message: 'WAIT="0" is invalid: must be greater than 0' })
  t.same(refused(() => settingReader({ WAIT: '5' }, DEFAULTS).duration('WAIT', positive)),
    { variable: 'WAIT', message: 'WAIT="5" is invalid: must be a duration such as 250ms, 5s, 2m or 1m30s (a bare number other than 0 is not)' })
  t.same(refused(() => bad.integer('COUNT', 1, 9, ', or off')), { variable: 'COUNT', message: 'COUNT="10" is invalid: must be an integer from 1 to 9, or off' })
  t.same(refused(() => bad.byteSize('SIZE', 0, 4096, 'a size up to 4KiB')), { variable: 'SIZE', message: 'SIZE="2MB" is invalid: a size up to 4KiB' })
  t.same(refused(() => settingReader({ SIZE: '512' }, DEFAULTS).byteSize('SIZE', 1024, 4096, 'from 1KiB')), { variable: 'SIZE', message: 'SIZE="512" is invalid: from 1KiB' })
  t.same(refused(() => bad.boolean('ON')), { variable: 'ON', message: 'ON="yes" is invalid: must be true or false' })
})
