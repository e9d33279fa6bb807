// The whole OAuth client runs in the browser: a public client (no secret) using the
// authorization code flow with PKCE, redeeming its code at /oauth/token across origins (CORS),
// then calling the OAuth server's API with the token and the data API with an API key.
import config from '/config.js'
import * as oauth from '/oauth4webapi.js'

const $ = (id) => document.getElementById(id)
const issuer = new URL(config.issuer)
const client = { client_id: config.clientId }
const redirectUri = `${location.origin}/callback`
// plain http only for services on this machine (development, tests)
const insecure = { [oauth.allowInsecureRequests]: issuer.protocol === 'http:' }

async function discover() {
  const response = await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure })
  return oauth.processDiscoveryResponse(issuer, response)
}

async function signIn() {
  const as = await discover()
  const verifier = oauth.generateRandomCodeVerifier()
  const state = oauth.generateRandomState()
  sessionStorage.setItem('pkce', JSON.stringify({ verifier, state }))
  const url = new URL(as.authorization_endpoint)
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: client.client_id,
    redirect_uri: redirectUri,
    scope: 'read_user',
    state,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  }).toString()
  location.assign(url)
}

async function callback() {
  const saved = JSON.parse(sessionStorage.getItem('pkce') ?? 'null')
  sessionStorage.removeItem('pkce')
  if (!saved) throw new Error('no sign-in in progress')
  const as = await discover()
  const params = oauth.validateAuthResponse(as, client, new URL(location.href), saved.state)
  history.replaceState(null, '', '/')
  const response = await oauth.authorizationCodeGrantRequest(
    as,
    client,
    oauth.None(),
    params,
    redirectUri,
    saved.verifier,
    insecure,
  )
  const tokens = await oauth.processAuthorizationCodeResponse(as, client, response)
  return tokens.access_token
}

async function showUser(accessToken) {
  const response = await fetch(new URL('/api/v4/user', issuer), {
    headers: { authorization: `Bearer ${accessToken}` },
  })
  if (!response.ok) throw new Error(`/api/v4/user answered ${response.status}`)
  const user = await response.json()
  $('user').textContent = JSON.stringify(user, null, 2)
  $('title').textContent = `Signed in as ${user.username}`
}

async function showData() {
  const headers = { 'x-api-key': config.apiKey }
  const json = await fetch(new URL('/data/pv', config.dataApi), { headers })
  if (!json.ok) throw new Error(`/data/pv answered ${json.status}`)
  const rows = await json.json()
  $('data').textContent = `${rows.length} rows of photovoltaic production`
  // the same data as CSV, chosen by Accept; its file name is an exposed header
  const csv = await fetch(new URL('/data/pv', config.dataApi), { headers: { ...headers, accept: 'text/csv' } })
  $('file').textContent = `CSV: ${csv.headers.get('content-disposition')}`
}

async function main() {
  if (new URL(location.href).searchParams.has('code')) {
    $('status').textContent = 'Redeeming the code...'
    const accessToken = await callback()
    await showUser(accessToken)
    await showData()
    $('status').textContent = 'Done'
  } else {
    $('status').textContent = 'Signed out'
    $('sign-in').hidden = false
    $('sign-in').addEventListener('click', () => signIn().catch(fail))
  }
}

function fail(error) {
  $('status').textContent = `Failed: ${error instanceof oauth.ResponseBodyError ? error.error : error}`
}

main().catch(fail)
