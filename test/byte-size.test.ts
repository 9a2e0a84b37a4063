import t from 'tap'
import { formatByteSize, parseByteSize } from '../src/byte-size.js'

t.test('parses bytes with an optional KiB or MiB suffix', async (t) => {
  t.equal(parseByteSize('0'), 0)
  t.equal(parseByteSize('65536'), 65536)
  t.equal(parseByteSize('64KiB'), 65536)
  t.equal(parseByteSize('16MiB'), 16 * 1024 * 1024)
  for (const bad of ['', '16MB', '16mib', '16 MiB', '1.5MiB', '-1', 'MiB', '1GiB', '9999999999999999']) {
    t.equal(parseByteSize(bad), undefined, JSON.stringify(bad))
  }
})

t.test('formats with the largest unit that divides exactly', async (t) => {
  t.equal(formatByteSize(16 * 1024 * 1024), '16MiB')
  t.equal(formatByteSize(65536), '64KiB')
  t.equal(formatByteSize(1536 * 1024), '1536KiB')
  t.equal(formatByteSize(100000), '100000')
  t.equal(formatByteSize(0), '0')
})
