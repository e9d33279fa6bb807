/** The minimal pipeline (pipeline-program.ts) as a contender: its own process, database and topic root. */
import { fileURLToPath } from 'node:url'
import { senmlTopics } from '../../packages/ingest/src/service.ts'
import { type Contender, mqttPeer, scratchDatabase, spawnContender } from './contender.ts'

const PROGRAM = fileURLToPath(new URL('./pipeline-program.ts', import.meta.url))

export async function startMinimalPipeline(mqttUrl: string, run: string): Promise<Contender> {
  const database = await scratchDatabase('pipeline')
  const topicRoot = `bench-${run}-pipeline`
  const program = spawnContender(
    'minimal pipeline',
    [PROGRAM],
    {
      PIPELINE_MQTT_URL: mqttUrl,
      PIPELINE_DATABASE_URL: database.url,
      PIPELINE_TOPIC: `$share/b${run}pipeline/${senmlTopics(topicRoot)}`,
      PIPELINE_CLIENT_ID: `b${run}pipe`,
      PIPELINE_CONNECTIONS: process.env.BENCH_PIPELINE_CONNECTIONS ?? '8',
    },
    // all it prints is its one start line, then trouble
    /^(?!taking )/,
  )
  return mqttPeer('minimal pipeline', database, program, topicRoot)
}
