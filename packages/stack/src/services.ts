import { energyService } from '@campus/energy-data/service'
import { oauthService } from '@campus/oauth-server/service'
import { CommonConfig, DatabaseUrl, loadConfig, Port, type ServiceDescriptor } from '@campus/shared'
import Type from 'typebox'

/** The services of the stack, in the order they are listed. */
export const services: readonly ServiceDescriptor[] = [oauthService, energyService]

/**
 * What the stack reads: where embedded databases live, the interface, and each service's port
 * and database URL under the names (and with the defaults) its descriptor gives.
 */
const StackConfigSchema = Type.Object({
  ...Object.fromEntries(
    services.flatMap((s) => [
      [s.portEnv, Port(s.defaultPort)],
      [s.databaseUrlEnv, DatabaseUrl()],
    ]),
  ),
  HOST: CommonConfig.HOST,
  DATA_DIR: CommonConfig.DATA_DIR,
})

export type StackConfig = { HOST: string; DATA_DIR: string } & Record<string, unknown>

export const loadStackConfig = (): StackConfig => loadConfig(StackConfigSchema) as StackConfig
