import { createHash } from 'node:crypto'
import t from 'tap'
import { consensusAddress, validatorKeyAddress } from '../../src/cometbft/address.js'

// The Go tests' stub validator key: the 32 ASCII bytes "01234567890123456789012345678901".
const STUB = Buffer.from('01234567890123456789012345678901')
const STUB_ADDRESS = createHash('sha256').update(STUB).digest('hex').slice(0, 40).toUpperCase()

t.test('the address is the upper-case hex of the first 20 bytes of SHA-256', async (t) => {
  t.equal(consensusAddress(STUB), STUB_ADDRESS)
  t.match(consensusAddress(STUB), /^[0-9A-F]{40}$/)
  // SHA-256("") starts e3b0c44298fc1c149afbf4c8996fb92427ae41e4: a vector independent of the code.
  t.equal(consensusAddress(new Uint8Array()), 'E3B0C44298FC1C149AFBF4C8996FB92427AE41E4')
})

t.test('validator keys: base64 decoded, or "" when Go\'s StdEncoding would reject them', async (t) => {
  t.equal(validatorKeyAddress(STUB.toString('base64')), STUB_ADDRESS)
  for (const bad of ['', 'not-a-base64-key!', 'MDEyMw', 'MDEyMw=', 'MD Ey', '-_8=', 'MDEyMw==MDEy']) {
    t.equal(validatorKeyAddress(bad), '', JSON.stringify(bad))
  }
  t.not(validatorKeyAddress('MDEy'), '', 'unpadded but a whole quantum: valid')
})
