/**
 * What a service declares about itself in one place (its `src/service.ts`), so that whoever
 * starts, migrates or launches it (its own server and CLI, the stack, tests, benchmarks) reads
 * the facts from there instead of restating them. Shared knows this shape, never a service.
 */
export interface ServiceDescriptor {
  /** Short name: `.data/<name>/`, the test database prefix, the log prefix of the stack. */
  readonly name: string
  readonly title: string
  /** The variable holding its port, and the port when it is unset. */
  readonly portEnv: string
  readonly defaultPort: number
  /** The variable holding its `postgres://` URL (unset: the embedded database). */
  readonly databaseUrlEnv: string
  /** Absolute path of its SQL migrations. */
  readonly migrationsDir: string
  /** Absolute paths of its entry points. */
  readonly serverEntry: string
  readonly cliEntry: string
  /** Node flags it runs with in production (heap sizing measured for it). */
  readonly nodeOptions: readonly string[]
}
