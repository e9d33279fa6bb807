import type { RunningService } from '@campus/shared'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  close,
  clusterPrograms,
  packsOf,
  publishAll,
  type Sample,
  startTestCluster,
  type TestCluster,
} from './cluster-support.ts'
import { BASE, eventually, QUARTER, quarterStats } from './support.ts'

/**
 * The replicated queue on real processes: a three-node RabbitMQ cluster (a quorum queue, the MQTT
 * plugin for the dataloggers at QoS 1, MQTT 3.1.1), two ingest instances competing for its
 * messages, a PostgreSQL primary of the test's own. Faults: kill -9 of the node leading the queue
 * and of an ingest instance while packs flow, then a restart of the primary. Afterwards every
 * pack the broker acknowledged is stored exactly once and the quarter hours equal a recomputation.
 */
const onCluster = clusterPrograms('cluster fault tests (RabbitMQ, PostgreSQL)')

let cluster: TestCluster
const ingest: RunningService[] = []

beforeAll(async () => {
  if (!onCluster) return
  cluster = await startTestCluster()
  ingest.push(await cluster.launchIngest(0), await cluster.launchIngest(1))
}, 240_000)

afterAll(async () => {
  await Promise.allSettled(ingest.map((i) => i.stop('SIGTERM')))
  await cluster?.stop()
}, 120_000)

const mqttUrls = () => cluster.rabbit.describe().map((n) => n.mqtt)

const samplesOf = async (meters: number[]) =>
  Number(
    (
      await cluster.database.pool.query('select count(*)::int as n from meter_samples where meter_id = any($1)', [
        meters,
      ])
    ).rows[0].n,
  )

/** Every sent sample stored once, and each quarter hour's count and sum those of the samples sent. */
async function expectExactlyOnce(meters: number[], sent: Sample[]) {
  const { rows } = await cluster.database.pool.query<{ meter_id: number; t: Date; n: number }>(
    `select meter_id, at as t, count(*)::int as n from meter_samples where meter_id = any($1)
     group by 1, 2 having count(*) > 1`,
    [meters],
  )
  expect(rows, 'samples stored twice').toEqual([])
  expect(await samplesOf(meters)).toBe(sent.length)
  const stored = await cluster.database.pool.query<{
    meter_id: number
    time_15m: Date
    sum_value: number
    count_value: number
  }>('select meter_id, time_15m, sum_value, count_value from data_15m where meter_id = any($1) and time_15m >= $2', [
    meters,
    new Date(BASE),
  ])
  const byKey = new Map(stored.rows.map((r) => [`${r.meter_id}@${r.time_15m.getTime()}`, r]))
  const want = quarterStats(sent)
  expect(byKey.size).toBe(want.size)
  for (const [key, stats] of want) {
    const row = byKey.get(key)
    expect(row, key).toBeDefined()
    expect(row?.count_value, key).toBe(stats.count)
    expect(close(row?.sum_value ?? Number.NaN, stats.sum), `${key}: ${row?.sum_value} != ${stats.sum}`).toBe(true)
  }
}

describe.runIf(onCluster)('a replicated queue between the dataloggers and the ingest instances', () => {
  it('kill -9 of the node leading the queue and of an ingest instance mid-stream: every acknowledged pack stored exactly once', async () => {
    const meters = [910, 911, 912]
    const meters2 = [900, 901]
    const a = packsOf('DL-CF-01', meters, BASE, 600, 10)
    const b = packsOf('DL-DC-01', meters2, BASE, 600, 10)
    const leader = await cluster.rabbit.leaderOf('ingest', 1)
    expect(leader).toBeDefined()
    const killedNode = leader as number
    let faults: Promise<void> | undefined
    const trigger = (acked: number) => {
      // a third of the way: the leader dies, then an instance while it holds a batch
      if (acked !== 200 || faults) return
      faults = (async () => {
        await cluster.rabbit.kill(killedNode)
        const victim = ingest[0] as RunningService
        victim.child.kill('SIGKILL')
        await victim.exited
      })()
    }
    // one publisher on each node: the leader's own publisher goes to the next node when it dies
    const [ra, rb] = await Promise.all([
      publishAll(mqttUrls(), a, { first: killedNode, clientId: 'dl-cf-01', onAcked: trigger }),
      publishAll(mqttUrls(), b, { first: killedNode + 1, clientId: 'dl-dc-01' }),
    ])
    await faults
    expect(ra.acked + rb.acked).toBe(a.length + b.length)
    const newLeader = await cluster.rabbit.leaderOf('ingest', (killedNode + 1) % 3)
    expect(newLeader).not.toBe(killedNode)
    const sent = [...a, ...b].flatMap((p) => p.samples)
    // the surviving instance takes what the killed one held unacknowledged
    await eventually(async () => (await samplesOf([...meters, ...meters2])) >= sent.length, 'every sample', 90_000)
    await expectExactlyOnce([...meters, ...meters2], sent)
    process.stdout.write(
      `cluster faults: ${a.length + b.length} packs acknowledged, leader ${cluster.rabbit.nodeName(killedNode)} and an ingest instance killed, publishers moved ${ra.reconnections + rb.reconnections} time(s); ${sent.length} samples stored once\n`,
    )
    // the node comes back and joins the queue again; the killed instance is started again
    cluster.rabbit.startNode(killedNode)
    ingest[0] = await cluster.launchIngest(killedNode)
    await cluster.rabbit.awaitNode(killedNode)
  }, 240_000)

  it('a restart of the primary mid-stream: nothing acknowledged is lost, nothing counted twice', async () => {
    const meters = [863]
    const packs = packsOf('DL-AULEP-01', meters, BASE + 96 * QUARTER, 400, 10)
    let restart: Promise<void> | undefined
    const result = await publishAll(mqttUrls(), packs, {
      first: 0,
      clientId: 'dl-aulep-01',
      onAcked: (n) => {
        if (n !== 100 || restart) return
        restart = (async () => {
          await cluster.postgres.stopServer('primary', 'SIGINT')
          await new Promise((r) => setTimeout(r, 2000))
          await cluster.postgres.startServer('primary')
        })()
      },
    })
    await restart
    expect(result.acked).toBe(packs.length)
    const sent = packs.flatMap((p) => p.samples)
    await eventually(async () => (await samplesOf(meters).catch(() => 0)) >= sent.length, 'every sample', 90_000)
    await expectExactlyOnce(meters, sent)
    for (const instance of ingest) expect((await fetch(`${instance.url}/health/ready`)).status).toBe(200)
  }, 240_000)
})
