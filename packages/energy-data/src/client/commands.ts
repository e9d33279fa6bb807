/**
 * The energy CLI as a client of the running services: `login` signs a person in by the device
 * authorization grant (RFC 8628, through oauth4webapi, the client library of the field) and
 * keeps the token in the user's configuration directory; `export` streams a group's series from
 * the data API with it.
 */
import { createWriteStream } from 'node:fs'
import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises'
import { homedir } from 'node:os'
import { dirname, join } from 'node:path'
import { Readable, type Writable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { commandFailed, programAsTyped, usageError } from '@campus/shared'
import * as oauth from 'oauth4webapi'
import { GROUP_NAMES } from '../catalogue/groups.ts'
import { DATA_FORMAT_VALUES } from '../export/encoders.ts'

/** What `login` keeps: enough for `export` to call the data API as the person. */
export interface StoredLogin {
  issuer: string
  client_id: string
  access_token: string
  refresh_token?: string
  scope: string
  expires_at: string
}

/** `$XDG_CONFIG_HOME/campus-energy/token.json`, else under `~/.config` (the XDG default). */
export function tokenFile(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CONFIG_HOME?.startsWith('/') ? env.XDG_CONFIG_HOME : join(homedir(), '.config')
  return join(base, 'campus-energy', 'token.json')
}

/** Written to a new file created 0600 (never readable by others, even for a moment), then renamed over the old one. */
async function saveLogin(file: string, login: StoredLogin): Promise<void> {
  await mkdir(dirname(file), { recursive: true, mode: 0o700 })
  const temporary = `${file}.${process.pid}.tmp`
  await writeFile(temporary, `${JSON.stringify(login, null, 2)}\n`, { mode: 0o600, flag: 'wx' })
  await chmod(temporary, 0o600)
  await rename(temporary, file)
}

async function readLogin(file: string): Promise<StoredLogin> {
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch {
    throw commandFailed(`not signed in: run ${programAsTyped('pnpm energy')} login first (no ${file})`)
  }
  return JSON.parse(text) as StoredLogin
}

const sleep = (seconds: number) => new Promise((r) => setTimeout(r, seconds * 1000))

function httpOptions(url: string) {
  return { [oauth.allowInsecureRequests]: new URL(url).protocol === 'http:' }
}

async function discover(issuer: string): Promise<oauth.AuthorizationServer> {
  const url = new URL(issuer)
  try {
    const response = await oauth.discoveryRequest(url, { algorithm: 'oauth2', ...httpOptions(issuer) })
    return await oauth.processDiscoveryResponse(url, response)
  } catch (error) {
    throw commandFailed(`cannot read the OAuth server's metadata at ${issuer}: ${(error as Error).message}`)
  }
}

/** Signs a person in by the device flow; `tell` shows the code and the address (stderr). */
export async function login(
  options: { issuer: string; clientId: string; scope: string; file: string },
  tell: (line: string) => void,
) {
  const as = await discover(options.issuer)
  const client: oauth.Client = { client_id: options.clientId }
  const auth = oauth.None()
  const http = httpOptions(options.issuer)
  let device: oauth.DeviceAuthorizationResponse
  try {
    const response = await oauth.deviceAuthorizationRequest(as, client, auth, { scope: options.scope }, http)
    device = await oauth.processDeviceAuthorizationResponse(as, client, response)
  } catch (error) {
    throw commandFailed(`the OAuth server refused the device authorization: ${describe(error)}`)
  }
  tell(`To sign in, open ${device.verification_uri} and enter the code ${device.user_code}`)
  if (device.verification_uri_complete) tell(`(or open ${device.verification_uri_complete})`)
  tell('Waiting for the approval...')
  let interval = device.interval ?? 5
  const deadline = Date.now() + device.expires_in * 1000
  for (;;) {
    await sleep(interval)
    try {
      const response = await oauth.deviceCodeGrantRequest(as, client, auth, device.device_code, http)
      const tokens = await oauth.processDeviceCodeResponse(as, client, response)
      const stored: StoredLogin = {
        issuer: as.issuer,
        client_id: options.clientId,
        access_token: tokens.access_token,
        ...(tokens.refresh_token ? { refresh_token: tokens.refresh_token } : {}),
        scope: tokens.scope ?? options.scope,
        expires_at: new Date(Date.now() + (tokens.expires_in ?? 0) * 1000).toISOString(),
      }
      await saveLogin(options.file, stored)
      return { signed_in: true, token_file: options.file, scope: stored.scope, expires_at: stored.expires_at }
    } catch (error) {
      const code = error instanceof oauth.ResponseBodyError ? error.error : undefined
      if (code === 'authorization_pending' && Date.now() < deadline) continue
      if (code === 'slow_down') {
        interval += 5
        continue
      }
      if (code === 'access_denied') throw commandFailed('the sign-in was denied')
      if (code === 'expired_token') throw commandFailed('the code expired before it was entered: run login again')
      throw commandFailed(`the sign-in failed: ${describe(error)}`)
    }
  }
}

function describe(error: unknown): string {
  if (error instanceof oauth.ResponseBodyError) return `${error.error}: ${error.error_description ?? ''}`.trim()
  return (error as Error).message
}

export interface ExportOptions {
  url: string
  group: string
  from: string
  to: string
  format: string
  output: string | undefined
  file: string
}

export function checkExportOptions(options: ExportOptions): void {
  if (!(GROUP_NAMES as string[]).includes(options.group)) {
    throw usageError(`--group must be one of ${GROUP_NAMES.join(', ')}`)
  }
  if (!(DATA_FORMAT_VALUES as string[]).includes(options.format)) {
    throw usageError(`--format must be one of ${DATA_FORMAT_VALUES.join(', ')}`)
  }
}

/**
 * Streams `/data/<group>` for the window to `--output` (or stdout) with the stored token; the
 * data API's own refusal (422 for a bad date, 403 without read_energy...) is the message.
 * Returns undefined when the data went to stdout (nothing else may be printed there).
 */
export async function exportData(
  options: ExportOptions,
  stdout: Writable,
  warn: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
) {
  checkExportOptions(options)
  const stored = await readLogin(options.file)
  const url = new URL(`/data/${options.group}`, options.url)
  url.searchParams.set('start_datetime', options.from)
  url.searchParams.set('end_datetime', options.to)
  url.searchParams.set('data_format', options.format)
  let response: Response
  try {
    response = await fetch(url, { headers: { authorization: `Bearer ${stored.access_token}` } })
  } catch (error) {
    throw commandFailed(`cannot reach the data API at ${options.url}: ${(error as Error).message}`)
  }
  if (!response.ok || !response.body) {
    const text = await response.text()
    const hint = response.status === 401 ? ` (run ${programAsTyped('pnpm energy')} login again)` : ''
    throw commandFailed(`the data API answered ${response.status}${hint}: ${text.slice(0, 500)}`)
  }
  const body = Readable.fromWeb(response.body as import('node:stream/web').ReadableStream)
  const seen = { bytes: 0, lines: 0 }
  const counted = body.map((chunk: Buffer) => {
    seen.bytes += chunk.length
    for (const byte of chunk) if (byte === 0x0a) seen.lines++
    return chunk
  })
  const warnIfEmpty = () => {
    // a header line alone (CSV, TXT) or an empty JSON array: the window holds no measurements
    const empty = options.format === 'raw' ? seen.bytes <= 3 : seen.lines <= 1
    if (empty) {
      warn(
        `export: no measurements of ${options.group} from ${options.from} to ${options.to} (a time without an offset is UTC): ` +
          'the data API holds none in that window',
      )
    }
  }
  if (options.output === undefined) {
    await pipeline(counted, stdout, { end: false })
    warnIfEmpty()
    return undefined
  }
  await pipeline(counted, createWriteStream(options.output))
  warnIfEmpty()
  return { written: options.output, group: options.group, from: options.from, to: options.to }
}
