import t from 'tap'
import { currentClient, NO_CLIENT, runAsClient } from '../src/client-context.js'

t.test('work run as a client stays that client\'s through awaits; other work is no one\'s', async (t) => {
  t.equal(currentClient(), NO_CLIENT)
  const seen = await Promise.all(['a', 'b'].map(async (client) => runAsClient(client, async () => {
    await new Promise((resolve) => setTimeout(resolve, client === 'a' ? 5 : 1))
    await Promise.resolve()
    return currentClient()
  })))
  t.same(seen, ['a', 'b'])
  t.equal(currentClient(), NO_CLIENT)
})
