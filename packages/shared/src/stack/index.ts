export { prettyLine } from './pretty.ts'
export { repoRoot, type ServiceDescriptor, service, services } from './services.ts'
