import t from 'tap'
import { FAR_OVER_FLOOR, FairShare, RECENT_TICKS, ROWS, WIDTH } from '../../src/admission/fair-share.js'
import { clientAddress } from '../../src/admission/client-identity.js'

t.test('a client is over its share when it has more in flight than the mean of the active clients', async (t) => {
  const share = new FairShare()
  const heavy = share.slotsOf('10.0.0.1')
  const polite = share.slotsOf('10.0.0.2')
  for (let i = 0; i < 30; i++) share.start(heavy)
  share.sample()
  t.equal(share.activeClients, 1)
  t.notOk(share.overShare(heavy), 'alone, a client is never over its share: it gets the whole replica')
  t.notOk(share.uneven)
  share.start(polite)
  share.sample()
  t.equal(share.activeClients, 2)
  t.equal(share.inFlight, 31)
  t.equal(share.inFlightOf(heavy), 30)
  t.ok(share.overShare(heavy))
  t.notOk(share.overShare(polite))
  t.ok(share.uneven)
  for (let i = 0; i < 29; i++) share.end(heavy)
  share.sample()
  t.notOk(share.overShare(heavy), 'even again')
  t.notOk(share.uneven)
  share.end(heavy)
  t.equal(share.inFlight, 1)
  t.equal(share.activeClients, 2, 'a client between requests is still one of the active')
  t.notOk(share.overShare(polite), 'one request at a time is never over the share, however many idle clients lower the mean')
  share.end(polite)
  for (let i = 0; i < RECENT_TICKS; i++) share.sample()
  t.equal(share.activeClients, 2, 'active for RECENT_TICKS samples (10 s) after its last request')
  share.sample()
  t.equal(share.activeClients, 0, 'then forgotten')
  t.equal(share.inFlight, 0)
})

t.test('far over its share: beyond four times the other clients\' mean and the floor; never alone, never a page of a few reads', async (t) => {
  const share = new FairShare()
  const scraper = share.slotsOf('10.0.0.1')
  const others = Array.from({ length: 3 }, (_, i) => share.slotsOf(`10.0.1.${i}`))
  for (let i = 0; i < 100; i++) share.start(scraper)
  share.sample()
  t.notOk(share.farOverShare(scraper), 'alone: never, however many it has in flight')
  for (const other of others) share.start(other)
  share.sample()
  t.ok(share.farOverShare(scraper), '100 in flight beside clients with one each')
  for (let i = 0; i < 100; i++) share.end(scraper)

  const page = share.slotsOf('10.0.0.2')
  for (let i = 0; i < 5; i++) share.start(page)
  share.sample()
  t.notOk(share.farOverShare(page), 'a page of five reads beside clients with one each: under the floor')
  for (let i = 0; i < FAR_OVER_FLOOR - 5 + 1; i++) share.start(page)
  t.ok(share.farOverShare(page), 'past the floor')
  for (const other of others) for (let i = 0; i < 2; i++) share.start(other)
  t.notOk(share.farOverShare(page), 'not when the others have a third as many each')
})

t.test('a million distinct clients leave the memory where it was: a fixed sketch', async (t) => {
  const share = new FairShare()
  const held = []
  for (let i = 0; i < 1_000_000; i++) {
    const slots = share.slotsOf(`2001:db8:${(i >>> 16).toString(16)}:${(i & 0xffff).toString(16)}::/64`)
    share.start(slots)
    if (i % 1000 === 0) held.push(slots)
    else share.end(slots)
  }
  // RECENT_TICKS samples later, the clients active are those with a request in flight.
  for (let i = 0; i <= RECENT_TICKS; i++) share.sample()
  t.equal(share.inFlight, 1000)
  const active = share.activeClients
  t.ok(active > 900 && active < 1100, `${active} active clients estimated for 1000`)
  t.equal(ROWS * WIDTH * Int32Array.BYTES_PER_ELEMENT, 32 * 1024, 'the bound: 32 KiB of counters, whatever the number of clients')
  share.sample()
  // Saturated (every counter taken): the estimate is capped, not infinite.
  const full = new FairShare()
  for (let i = 0; i < 200_000; i++) full.start(full.slotsOf(String(i)))
  t.ok(Number.isFinite(full.activeClients))
})

t.test('a victim cannot be framed: addresses found to share its counters in one process share nothing in another (the hash is keyed by each process\'s secret)', async (t) => {
  const attacked = new FairShare([0x01234567, 0x89abcdef])
  const victim = '203.0.113.7'
  const target = attacked.slotsOf(victim)
  // What an attacker with one IPv6 /48 does against a hash it can compute: a /64 of its own on
  // each of the victim's counters (with the fixed seeds it had, 2,884 tries).
  const own: string[] = []
  for (let row = 0; row < ROWS; row++) {
    for (let subnet = 0; subnet < 0x10000; subnet++) {
      const client = clientAddress(`2001:db8:77:${subnet.toString(16)}::1`) as string
      if (attacked.slotsOf(client)[row] === target[row]) {
        own.push(client)
        break
      }
    }
  }
  t.equal(own.length, ROWS, `a /64 found on each of the victim's counters where the key is known: ${own.join(', ')}`)
  const frame = (share: FairShare): number => {
    for (const client of own) for (let i = 0; i < 13; i++) share.start(share.slotsOf(client))
    const slots = share.slotsOf(victim)
    share.start(slots)
    return share.inFlightOf(slots)
  }
  t.equal(frame(new FairShare([0x01234567, 0x89abcdef])), 14, 'where it was found, the victim\'s one request counts as 14')
  t.equal(frame(new FairShare()), 1, 'in a process of its own key, the same addresses leave the victim its one request')
  const [one, other] = [new FairShare(), new FairShare()]
  const addresses = Array.from({ length: 20 }, (_, i) => `198.51.100.${i}`)
  t.same(addresses.filter((address) => one.slotsOf(address).join() === other.slotsOf(address).join()), [], 'two processes place the same clients apart')
})
