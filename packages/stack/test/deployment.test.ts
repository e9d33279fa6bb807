/**
 * Container files cannot import a service's descriptor, so they restate what it says (Node
 * flags, entry point, port); this keeps them saying the same.
 */
import { readFileSync } from 'node:fs'
import { relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { services } from '../src/services.ts'

const root = fileURLToPath(new URL('../../../', import.meta.url))
const compose = readFileSync(`${root}docker-compose.yml`, 'utf8')

describe.each(services.map((s) => [s.name, s] as const))(
  'the %s image runs the service as its descriptor says',
  (_, service) => {
    const packageDir = relative(root, fileURLToPath(new URL('..', `file://${service.serverEntry}`)))
    const dockerfile = readFileSync(`${root}${packageDir}/Dockerfile`, 'utf8')

    it('with its Node flags and server entry', () => {
      const cmd = JSON.parse(/^CMD (\[.*\])$/m.exec(dockerfile)?.[1] ?? '[]') as string[]
      expect(cmd[0]).toBe('node')
      expect(cmd.filter((arg) => arg.startsWith('--max-'))).toEqual(service.nodeOptions)
      expect(cmd.at(-1)).toBe(relative(root, service.serverEntry))
    })

    it('on its default port, probed there, published there', () => {
      expect(/^EXPOSE (\d+)$/m.exec(dockerfile)?.[1]).toBe(String(service.defaultPort))
      expect(/^HEALTHCHECK .*http:\/\/127\.0\.0\.1:(\d+)\/health\/live/m.exec(dockerfile)?.[1]).toBe(
        String(service.defaultPort),
      )
      expect(compose).toContain(`- "${service.defaultPort}:${service.defaultPort}"`)
    })
  },
)
