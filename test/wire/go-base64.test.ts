import t from 'tap'
import { decodeBase64 } from '../../src/wire/go-base64.js'

t.test('decodeBase64 accepts standard padded base64 only', async (t) => {
  t.same(decodeBase64('MDEyMw=='), Buffer.from('0123'))
  t.same(decodeBase64('MDEyMzQ='), Buffer.from('01234'))
  t.same(decodeBase64('+/+/AQ=='), Buffer.from([0xfb, 0xff, 0xbf, 0x01]))
  t.equal(decodeBase64('-_-_AQ=='), undefined, 'URL-safe alphabet is not StdEncoding')
  t.equal(decodeBase64('MDEyMw'), undefined, 'padding is required')
})
