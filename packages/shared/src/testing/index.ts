export { createTestDatabase, type TestDatabase, type TestDatabaseKind } from './database.ts'
export { startTcpProxy, type TcpProxy } from './tcp-proxy.ts'
