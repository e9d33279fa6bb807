export { PostgresPair, type PostgresServer, postgresPrograms } from './postgres.ts'
export {
  alive,
  type BrokerUser,
  mqttConnack,
  RabbitCluster,
  type RabbitClusterOptions,
  type RabbitNode,
  rabbitmqPrograms,
  rabbitPasswordHash,
} from './rabbitmq.ts'
