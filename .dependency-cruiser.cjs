/**
 * The layering `pnpm lint` enforces (dependency-cruiser). Folders mean the same in every
 * service: routes/ (HTTP only), plugins/ (Fastify plugins), repositories/ (queries), domain/
 * (pure rules), pages/ (the HTML surface). No baseline: every rule holds everywhere.
 */
const SERVICE_SRC = '^packages/(oauth-server|energy-data)/src'
const HTTP_MODULES = 'node_modules/(fastify|fastify-plugin|@fastify)/'
/** The composition of a service: the app, and its instance type with the route-plugin maker. */
const COMPOSITION = `${SERVICE_SRC}/(app|oauth-app|energy-app)\\.ts$`

module.exports = {
  forbidden: [
    {
      name: 'route-imports-route',
      comment: 'A route plugin stands alone: what two route files share lives outside routes/.',
      severity: 'error',
      from: { path: `(${SERVICE_SRC}/routes)/` },
      to: { path: '^$1/' },
    },
    {
      name: 'routes-composed-by-app-only',
      comment: 'Only app.ts registers route plugins; nothing else reaches into routes/.',
      severity: 'error',
      from: { path: `${SERVICE_SRC}/`, pathNot: [`${SERVICE_SRC}/app\\.ts$`, `${SERVICE_SRC}/routes/`] },
      to: { path: `${SERVICE_SRC}/routes/` },
    },
    {
      name: 'shared-imports-a-service',
      comment: 'packages/shared is the floor: it knows no service and not the stack above them.',
      severity: 'error',
      from: { path: '^packages/shared/' },
      to: { path: '^packages/(?!shared/)[^/]+/' },
    },
    {
      name: 'service-imports-another-package',
      comment: 'A service depends on shared only: not on the other service, not on the stack.',
      severity: 'error',
      from: { path: '^packages/(oauth-server|energy-data)/' },
      to: { path: '^packages/(oauth-server|energy-data|stack)/', pathNot: '^packages/$1/' },
    },
    {
      name: 'repository-imports-http',
      comment: 'Repositories are queries taking db or trx: no Fastify, routes, plugins, pages or app.',
      severity: 'error',
      from: { path: `${SERVICE_SRC}/repositories/` },
      to: { path: [`${SERVICE_SRC}/(routes|plugins|pages)/`, COMPOSITION, HTTP_MODULES] },
    },
    {
      name: 'domain-imports-io',
      comment: 'Domain modules are pure rules: no repositories, database, HTTP or pages.',
      severity: 'error',
      from: { path: `${SERVICE_SRC}/domain/` },
      to: {
        path: [
          `${SERVICE_SRC}/(repositories|routes|plugins|pages|db)/`,
          COMPOSITION,
          HTTP_MODULES,
          'node_modules/(kysely|pg)/',
        ],
      },
    },
    {
      name: 'no-circular',
      comment: 'Modules that import each other cannot be understood (or tested) one at a time.',
      severity: 'error',
      from: { path: '^packages/' },
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^packages/[^/]+/test/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
}
