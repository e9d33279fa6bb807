export { answersAt } from '../net.ts'
export { browserAvailable, CHROMIUM, launchChromium, screenshot } from './browser.ts'
export {
  createTestDatabase,
  type DataSet,
  dropTemplates,
  startEmptyEmbeddedPostgres,
  type TestDatabase,
  type TestDatabaseKind,
} from './database.ts'
export {
  type FuzzOptions,
  type FuzzPlan,
  type FuzzReport,
  type FuzzRequest,
  fuzzPlan,
  fuzzService,
  percentEncode,
  undocumentedAnswer,
} from './fuzz.ts'
export { fromSchema, HOSTILE_STRINGS, hostileString } from './hostile.ts'
export {
  acceptValues,
  authorizationValues,
  contentTypeValues,
  cookieValues,
  forwardedForValues,
  forwardedValues,
  hostileRedirectUris,
  ifNoneMatchValues,
  requestIdValues,
  secretHeaderValues,
} from './hostile-http.ts'
export { scrapeMetric } from './metrics.ts'
export { type RawResponse, rawRequest } from './raw-http.ts'
export { needsService, serverProgram, stopServerProgram } from './requirements.ts'
export { startTcpProxy, type TcpProxy } from './tcp-proxy.ts'
