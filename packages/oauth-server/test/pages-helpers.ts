/** Drives the account pages over HTTP like a browser: sign in, read a page's CSRF token, submit forms. */
import { totp } from '../src/domain/totp.ts'
import { Browser, formFields } from './helpers.ts'

export interface Page {
  status: number
  headers: Headers
  html: string
  csrf: string
}

export async function getPage(browser: Browser, path: string): Promise<Page> {
  const response = await browser.request(path)
  const html = await response.text()
  return { status: response.status, headers: response.headers, html, csrf: formFields(html).csrf_token ?? '' }
}

/** Posts a form; list values become repeated fields (checkboxes). */
export async function submit(browser: Browser, path: string, form: Record<string, string | string[]>) {
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' }
  if (browser.cookies.size) headers.cookie = [...browser.cookies].map(([k, v]) => `${k}=${v}`).join('; ')
  const params = new URLSearchParams()
  for (const [k, v] of Object.entries(form)) for (const item of Array.isArray(v) ? v : [v]) params.append(k, item)
  const response = await fetch(new URL(path, browser.base), {
    method: 'POST',
    headers,
    body: params.toString(),
    redirect: 'manual',
  })
  for (const line of response.headers.getSetCookie()) {
    const [pair] = line.split(';')
    const eq = (pair as string).indexOf('=')
    const value = (pair as string).slice(eq + 1)
    if (value === '') browser.cookies.delete((pair as string).slice(0, eq))
    else browser.cookies.set((pair as string).slice(0, eq), value)
  }
  return { status: response.status, location: response.headers.get('location'), html: await response.text() }
}

/** Signs in through the pages (TOTP step when a secret is given); returns the browser. */
export async function signedIn(base: string, login: string, password: string, otpSecret?: string): Promise<Browser> {
  const browser = new Browser(base)
  const form = await getPage(browser, '/users/sign_in')
  const first = await submit(browser, '/users/sign_in', { csrf_token: form.csrf, username: login, password })
  if (first.location?.startsWith('/users/two_factor')) {
    if (!otpSecret) throw new Error('second factor asked for')
    const second = await getPage(browser, first.location)
    const done = await submit(browser, '/users/two_factor', {
      ...formFields(second.html),
      otp_attempt: totp(otpSecret),
    })
    if (done.status !== 303 || done.location?.startsWith('/users/')) throw new Error('second factor refused')
  } else if (first.status !== 303 || first.location?.startsWith('/users/')) {
    throw new Error(`sign-in refused: ${first.location}`)
  }
  return browser
}

/** Text of the element with this id (values shown once: secrets, tokens). */
export function textOf(html: string, id: string): string | undefined {
  const match = new RegExp(`id="${id}">([^<]*)<`).exec(html)
  return match?.[1]
}

export function bearer(base: string, token: string, path = '/api/v4/user') {
  return fetch(new URL(path, base), { headers: { authorization: `Bearer ${token}` } })
}
