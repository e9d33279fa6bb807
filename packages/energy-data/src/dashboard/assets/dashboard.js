// Draws every <canvas data-chart="name"> with the configuration the service builds for it.
// Chart.js is the UMD build served next to this file (global `Chart`).
// With an OAuth server configured (the `.account` section names it), signs people in by
// authorization code + PKCE (RFC 7636, S256): this page is the redirect URI; the state, the
// verifier and the token live in sessionStorage only, and the code leaves the address at once.
// Live: every POLL_MS the page asks for each chart again with its ETag (conditional polling: an
// unchanged chart costs a 304 and no redraw; a new quarter hour redraws it in place). Polling
// rather than server-sent events: the charts are already cacheable answers with ETags, so a proxy
// or CDN keeps serving them, and no connection stays open per viewer.
;(() => {
  const lang = document.documentElement.lang === 'en' ? 'en' : 'it'
  const text = {
    failed: { it: 'Grafico non disponibile', en: 'Chart unavailable' },
    signedIn: { it: 'Accesso come {user}', en: 'Signed in as {user}' },
    signInFailed: { it: 'Accesso non riuscito', en: 'Sign-in failed' },
  }
  const t = (name) => text[name][lang]
  const account = document.querySelector('.account[data-issuer][data-client-id]')
  const TOKEN = 'energy-dashboard:token'
  const PENDING = 'energy-dashboard:pending'
  const redirectUri = `${location.origin}/dashboard`

  const base64url = (bytes) =>
    btoa(String.fromCharCode(...new Uint8Array(bytes)))
      .replace(/\+/g, '-')
      .replace(/\//g, '_')
      .replace(/=+$/, '')
  const random = () => base64url(crypto.getRandomValues(new Uint8Array(32)))

  async function signIn() {
    const { issuer, clientId } = account.dataset
    const verifier = random()
    const state = random()
    const challenge = base64url(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier)))
    sessionStorage.setItem(PENDING, JSON.stringify({ state, verifier, lang }))
    const url = new URL(`${issuer}/oauth/authorize`)
    url.search = new URLSearchParams({
      client_id: clientId,
      redirect_uri: redirectUri,
      response_type: 'code',
      scope: 'read_energy',
      state,
      code_challenge: challenge,
      code_challenge_method: 'S256',
    }).toString()
    location.assign(url.toString())
  }

  /** The answer of the OAuth server in the address, if any: redeemed, then removed from the address. */
  async function finishSignIn() {
    const params = new URLSearchParams(location.search)
    if (!params.has('code') && !params.has('error')) return
    const pending = JSON.parse(sessionStorage.getItem(PENDING) ?? 'null')
    sessionStorage.removeItem(PENDING)
    history.replaceState(null, '', `/dashboard${pending?.lang ? `?lang=${pending.lang}` : ''}`)
    const { issuer, clientId } = account.dataset
    if (!pending || params.get('state') !== pending.state) throw new Error('state mismatch')
    // RFC 9207: the answer names the issuer it comes from
    if (params.has('iss') && params.get('iss') !== issuer) throw new Error('issuer mismatch')
    if (params.has('error')) throw new Error(params.get('error'))
    const response = await fetch(`${issuer}/oauth/token`, {
      method: 'POST',
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: params.get('code'),
        redirect_uri: redirectUri,
        client_id: clientId,
        code_verifier: pending.verifier,
      }),
    })
    const body = await response.json().catch(() => ({}))
    if (!response.ok || typeof body.access_token !== 'string') throw new Error(body.error ?? `HTTP ${response.status}`)
    sessionStorage.setItem(TOKEN, body.access_token)
  }

  function signOut() {
    const token = sessionStorage.getItem(TOKEN)
    sessionStorage.removeItem(TOKEN)
    if (token) {
      // RFC 7009: the OAuth server forgets it too (a public client names itself)
      const { issuer, clientId } = account.dataset
      fetch(`${issuer}/oauth/revoke`, {
        method: 'POST',
        body: new URLSearchParams({ token, client_id: clientId }),
        keepalive: true,
      }).catch(() => undefined)
    }
    location.reload()
  }

  /** The token, when it is still active at the data API; forgotten when it is not. */
  async function currentUser(token) {
    const response = await fetch('/auth/protected', {
      headers: { accept: 'application/json', authorization: `Bearer ${token}` },
    })
    if (response.status === 401) {
      sessionStorage.removeItem(TOKEN)
      return undefined
    }
    if (!response.ok) throw new Error(`HTTP ${response.status}`)
    return (await response.json()).user ?? ''
  }

  const POLL_MS = 8000
  const drawn = new Map()

  async function fetchChart(canvas, token, etag) {
    const headers = { accept: 'application/json' }
    if (token) headers.authorization = `Bearer ${token}`
    if (etag) headers['if-none-match'] = etag
    const name = canvas.dataset.chart
    return fetch(`/chart/${encodeURIComponent(name)}?lang=${lang}`, { headers, cache: 'no-store' })
  }

  async function draw(canvas, token) {
    const status = canvas.closest('figure')?.querySelector('.status')
    try {
      const response = await fetchChart(canvas, token)
      if (!response.ok) throw new Error(`HTTP ${response.status}`)
      const config = await response.json()
      drawn.set(canvas, { chart: new window.Chart(canvas, config), etag: response.headers.get('etag') })
      if (status) status.textContent = ''
    } catch (error) {
      if (status) status.textContent = `${t('failed')} (${error.message})`
    }
  }

  /** A chart asked for again: drawn anew in place when its answer changed (a new quarter hour). */
  async function refresh(canvas, token) {
    const known = drawn.get(canvas)
    if (!known) return draw(canvas, token)
    try {
      const response = await fetchChart(canvas, token, known.etag)
      if (response.status !== 200) return
      const config = await response.json()
      known.chart.data = config.data
      known.chart.update('none')
      known.etag = response.headers.get('etag')
    } catch {
      // offline for a moment: the next poll tries again
    }
  }

  async function start() {
    let token
    if (account) {
      const who = account.querySelector('.who')
      const signInButton = account.querySelector('.sign-in')
      const signOutButton = account.querySelector('.sign-out')
      signInButton.addEventListener('click', () =>
        signIn().catch((e) => (who.textContent = `${t('signInFailed')}: ${e.message}`)),
      )
      signOutButton.addEventListener('click', signOut)
      try {
        await finishSignIn()
        token = sessionStorage.getItem(TOKEN) ?? undefined
        const user = token ? await currentUser(token) : undefined
        if (user === undefined) token = undefined
        else {
          who.textContent = t('signedIn').replace('{user}', user)
          signInButton.hidden = true
          signOutButton.hidden = false
        }
      } catch (error) {
        token = undefined
        who.textContent = `${t('signInFailed')}: ${error.message}`
      }
    }
    const canvases = [...document.querySelectorAll('canvas[data-chart]')]
    for (const canvas of canvases) draw(canvas, token)
    setInterval(() => {
      if (document.hidden) return
      for (const canvas of canvases) refresh(canvas, token)
    }, POLL_MS)
    return token
  }

  // The "Now" panel: a server-sent event stream (one open connection per page, pushed after each
  // evaluation of the alert rules, so a new sample shows within seconds); where the stream is not
  // allowed (every route keyed), the same snapshot is polled with the page's token.
  const NOW_POLL_MS = 5000
  const locale = lang === 'it' ? 'it-IT' : 'en-GB'
  const number = new Intl.NumberFormat(locale, { maximumFractionDigits: 2 })
  const clock = new Intl.DateTimeFormat(locale, {
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    hourCycle: 'h23',
  })
  const nowText = {
    none: { it: 'mai', en: 'never' },
    noAlerts: { it: 'Nessuno', en: 'None' },
    status: {
      live: { it: 'in linea', en: 'live' },
      late: { it: 'in ritardo', en: 'late' },
      stale: { it: 'fermo', en: 'stale' },
    },
  }
  const age = (seconds) => {
    if (seconds === null) return '–'
    if (seconds < 120) return `${seconds} s`
    if (seconds < 7200) return `${Math.round(seconds / 60)} min`
    return `${Math.round(seconds / 3600)} h`
  }
  const cell = (row, text, className) => {
    const td = row.insertCell()
    td.textContent = text
    if (className) td.className = className
    return td
  }

  function renderNow(panel, now) {
    panel.querySelector('.now-at').textContent = clock.format(new Date(now.at))
    const loggers = panel.querySelector('.now-dataloggers tbody')
    loggers.replaceChildren()
    for (const d of now.dataloggers) {
      const row = loggers.insertRow()
      row.dataset.datalogger = d.id
      const name = cell(row, d.id)
      name.title = d.description ?? ''
      cell(row, d.last_sample_at ? clock.format(new Date(d.last_sample_at)) : nowText.none[lang])
      cell(row, age(d.age_seconds), 'age')
      cell(row, nowText.status[d.status][lang], `state ${d.status}`)
    }
    const meters = panel.querySelector('.now-meters tbody')
    meters.replaceChildren()
    for (const m of now.meters) {
      const row = meters.insertRow()
      row.dataset.meter = String(m.id)
      cell(row, m.description)
      cell(row, m.reading === null ? '–' : `${number.format(m.reading)} ${m.reading_unit}`, 'reading')
      cell(row, m.today === null ? '–' : `${number.format(m.today)} ${m.unit}`, 'today')
    }
    const list = panel.querySelector('.now-alerts ul')
    list.replaceChildren()
    for (const a of now.alerts) {
      const item = document.createElement('li')
      item.className = `alert ${a.severity}`
      item.textContent = `${a.rule}: ${a.summary}`
      list.append(item)
    }
    if (now.alerts.length === 0) {
      const item = document.createElement('li')
      item.className = 'quiet'
      item.textContent = nowText.noAlerts[lang]
      list.append(item)
    }
  }

  function followNow(token) {
    const panel = document.querySelector('section.now')
    if (!panel) return
    const poll = async () => {
      const headers = { accept: 'application/json' }
      if (token) headers.authorization = `Bearer ${token}`
      try {
        const response = await fetch('/dashboard/now', { headers, cache: 'no-store' })
        if (response.ok) renderNow(panel, await response.json())
      } catch {
        // offline for a moment: the next poll tries again
      }
    }
    const source = new EventSource('/dashboard/now/stream')
    source.addEventListener('now', (event) => renderNow(panel, JSON.parse(event.data)))
    source.addEventListener('error', () => {
      // closed for good (refused): poll instead; a dropped connection is reopened by the browser
      if (source.readyState !== EventSource.CLOSED) return
      poll()
      setInterval(() => document.hidden || poll(), NOW_POLL_MS)
    })
  }

  start().then((token) => followNow(token))
})()
