import t from 'tap'
import { BlockClock } from '../../harness/chain-simulator/block-clock.js'
import { startChainSimulator } from '../../harness/chain-simulator/simulator.js'
import { EPOCH_INFO_PATH } from '../../harness/pool.js'
import { until } from '../../harness/wait.js'
import { serveMain } from '../fixtures/serve-main.js'
import { openSse, type ReadEvent, type SseStream } from '../fixtures/sse-client.js'

// D10 across replicas (src/chain/epoch-anchor.ts): two replicas (dist/main.js) of one chain,
// the first one's node failing epoch_info for a moment as its streams start. Every replica must
// send the same events with the same ids, or a client resuming on one from another's id sees a
// different sequence; at 1365d2e (and with READ_ATTEMPTS 1) the replica whose read failed sent
// heights without their stage events.

// Epoch 42 of the simulator's data (POC_START 1842000): set_new_validators at 1842305 and
// claim_money at 1842306, each one stage event after the head.
const BEFORE_STAGES = 1842304
const STAGE_HEIGHTS = [1842305, 1842306]
const UNAVAILABLE = 14

t.test('a replica whose epoch_info read fails for a moment sends the same stage events as the others', async (t) => {
  const clock = new BlockClock(BEFORE_STAGES)
  const [failing, healthy] = await Promise.all([startChainSimulator(0, { clock }), startChainSimulator(0, { clock })])
  t.teardown(async () => { await failing.close(); await healthy.close() })
  failing.fail(EPOCH_INFO_PATH, UNAVAILABLE, 'epoch_info down for a moment')
  const [a, b] = await Promise.all([serveMain(t, [failing]), serveMain(t, [healthy])])
  const streams = await Promise.all([openSse(`${a.origin}/v1/events`), openSse(`${b.origin}/v1/events`)])
  t.teardown(() => { for (const stream of streams) stream.close() })
  // Each stream started at the head before the stage heights: a stream starts at the first head
  // its replica knows, and a replica still booting on a loaded machine could first know the
  // head after the advance below, and rightly never send the heights before it.
  await Promise.all(streams.map(async (stream) => await stream.next((event) => event.id === String(BEFORE_STAGES), `the stream's first head, ${BEFORE_STAGES}`)))
  await until(() => failing.count(EPOCH_INFO_PATH) >= 1, 'the first replica\'s first epoch_info read')
  // The stage heights land while its read fails; it fails once more (a retry, or, with no
  // retry, the read for a stage height), then the node answers again.
  clock.advance(STAGE_HEIGHTS.length)
  await until(() => failing.count(EPOCH_INFO_PATH) >= 2, 'the first replica\'s second epoch_info read')
  failing.clearFaults()
  clock.advance()
  const after = String(BEFORE_STAGES + STAGE_HEIGHTS.length + 1)
  await Promise.all(streams.map(async (stream) => await stream.next((event) => event.id === after, `the head after the stage heights (${after})`)))
  const [fromA, fromB] = streams.map(atStageHeights) as [ReadEvent[], ReadEvent[]]
  t.same(fromB.filter((event) => event.event === 'stage').map((event) => JSON.parse(event.data as string).stage), ['set_new_validators', 'claim_money'],
    'the healthy replica sends both stages')
  t.same(fromA, fromB, 'the replica whose epoch_info read failed sends the same events, ids and data')
  t.ok(failing.count(EPOCH_INFO_PATH) >= 3, `its read was tried again (${failing.count(EPOCH_INFO_PATH)} epoch_info reads)`)
})

function atStageHeights (stream: SseStream): ReadEvent[] {
  return stream.events.filter((event) => event.id !== undefined && STAGE_HEIGHTS.includes(Number(event.id.split('.')[0])))
    .map(({ id, event, data }) => ({ id, event, data }))
}
