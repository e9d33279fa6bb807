import type { ChartName } from '../charts/charts.ts'
import { type Language, localDateTime } from '../charts/i18n.ts'
import type { CampusCost, SpanCost } from '../repositories/campus-cost.ts'

const TEXT = {
  title: { it: 'Cruscotto energetico del campus', en: 'Campus energy dashboard' },
  intro: {
    it: 'Fotovoltaico, bilancio energetico e acqua, quarto d’ora per quarto d’ora (ora locale {zone}).',
    en: 'Photovoltaic, energy balance and water, quarter hour by quarter hour (local time {zone}).',
  },
  language: { it: 'Lingua', en: 'Language' },
  account: { it: 'Accesso', en: 'Account' },
  signIn: { it: 'Accedi', en: 'Sign in' },
  signOut: { it: 'Esci', en: 'Sign out' },
  loading: { it: 'Caricamento…', en: 'Loading…' },
  reports: { it: 'Rapporti', en: 'Reports' },
  api: { it: 'Documentazione API', en: 'API documentation' },
  noscript: {
    it: 'I grafici richiedono JavaScript; i rapporti in fondo alla pagina funzionano anche senza.',
    en: 'The charts need JavaScript; the reports linked at the bottom of the page work without it.',
  },
  until: { it: 'Dati fino al {time}', en: 'Data up to {time}' },
  cost: { it: 'Costo del campus', en: 'Cost of the campus' },
  today: { it: 'oggi', en: 'today' },
  month: { it: 'questo mese', en: 'this month' },
  electricity: { it: 'elettricità', en: 'electricity' },
  water: { it: 'acqua', en: 'water' },
  noTariff: {
    it: 'n.d. (un quarto d’ora senza tariffa: pnpm energy tariffs:import)',
    en: 'n/a (a quarter hour without a tariff: pnpm energy tariffs:import)',
  },
  costHow: {
    it: 'Contatori generali degli edifici e dell’acqua, quarti d’ora ok, ciascuno al prezzo in vigore.',
    en: 'Main meters of the buildings and of the water, ok quarter hours, each at the price in force.',
  },
  none: { it: 'Nessun dato', en: 'No data' },
  now: { it: 'Adesso', en: 'Now' },
  nowHow: {
    it: 'Aggiornato dal vivo: ultimo campione di ciascun datalogger, letture dei contatori generali, allarmi attivi.',
    en: 'Updated live: each datalogger’s last sample, the main meters’ readings, the alerts firing.',
  },
  dataloggers: { it: 'Datalogger', en: 'Dataloggers' },
  lastSample: { it: 'Ultimo campione', en: 'Last sample' },
  age: { it: 'Età', en: 'Age' },
  state: { it: 'Stato', en: 'Status' },
  mainMeters: { it: 'Contatori generali', en: 'Main meters' },
  meter: { it: 'Contatore', en: 'Meter' },
  reading: { it: 'Lettura', en: 'Reading' },
  todaySoFar: { it: 'Oggi finora', en: 'Today so far' },
  firing: { it: 'Allarmi attivi', en: 'Alerts firing' },
  stale: {
    it: 'Attenzione: i dati più recenti di {charts} hanno più di un giorno (fino al {time}). I grafici mostrano gli ultimi giorni con dati, non i giorni più recenti.',
    en: 'Warning: the newest data of {charts} is more than a day old (up to {time}). The charts show the last days holding data, not the most recent days.',
  },
  names: {
    fotovoltaico: { it: 'fotovoltaico', en: 'photovoltaic' },
    bilancio: { it: 'bilancio Aule P', en: 'Aule P balance' },
    acqua: { it: 'acqua', en: 'water' },
    fontanelle: { it: 'fontanelle', en: 'fountains' },
  } satisfies Record<ChartName, Record<Language, string>>,
  captions: {
    fotovoltaico: {
      it: 'Produzione per impianto, ultimi 7 giorni con dati, dettaglio 15 minuti (kW).',
      en: 'Production per plant, last 7 days holding data, 15-minute detail (kW).',
    },
    bilancio: {
      it: 'Aule P: produzione fotovoltaica e prelievo dalla rete rispetto al consumo, ultimi 7 giorni con dati (kW).',
      en: 'Aule P: photovoltaic production and grid withdrawal against consumption, last 7 days holding data (kW).',
    },
    acqua: {
      it: 'Consumo giornaliero, ultimi 30 giorni completi con dati (m³).',
      en: 'Daily use, last 30 complete days holding data (m³).',
    },
    fontanelle: {
      it: 'Portata di ciascuna fontanella, ultimi 7 giorni con dati (L/h).',
      en: 'Flow of each drinking fountain, last 7 days holding data (L/h).',
    },
  } satisfies Record<ChartName, Record<Language, string>>,
} as const

const LANGUAGE_NAMES: Record<Language, string> = { it: 'Italiano', en: 'English' }

/** How far each chart's data reaches: the end of its newest quarter hour, if any. */
export interface DataStatus {
  /** Per chart: the end of the newest quarter hour stored, epoch ms; undefined when its table is empty. */
  until: Record<ChartName, number | undefined>
  /** Whether that end lies more than a day before now. */
  stale: Record<ChartName, boolean>
  zone: string
}

/** Where the dashboard signs people in: the OAuth server's issuer and the public client's id. */
export interface SignIn {
  issuer: string
  clientId: string
}

const attribute = (value: string) =>
  value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;')

/** The dashboard page: markup only; the drawing is done by the served script, so the CSP allows no inline code. */
/** Today's and this month's cost of the campus, in words and numbers of `lang`. */
function costSection(cost: CampusCost, lang: Language): string {
  const format = new Intl.NumberFormat(lang === 'it' ? 'it-IT' : 'en-GB', {
    minimumFractionDigits: 2,
    maximumFractionDigits: 2,
  })
  const money = (value: number | null) =>
    value === null ? TEXT.noTariff[lang] : `${format.format(value)} ${attribute(cost.currency ?? '')}`.trimEnd()
  const span = (name: 'today' | 'month', c: SpanCost) =>
    `<dt>${TEXT[name][lang]}</dt><dd>${
      c.data
        ? `<strong>${money(c.total)}</strong> (${TEXT.electricity[lang]} ${money(c.electricity)}, ${TEXT.water[lang]} ${money(c.water)})`
        : TEXT.none[lang]
    }</dd>`
  return `  <section class="cost" aria-label="${TEXT.cost[lang]}">
    <h2>${TEXT.cost[lang]}</h2>
    <dl>${span('today', cost.today)}${span('month', cost.month)}</dl>
    <p>${TEXT.costHow[lang]}</p>
  </section>
`
}

/** The "Now" panel's frame; the script fills it from `/dashboard/now/stream` (server-sent events). */
function nowSection(lang: Language): string {
  const head = (...cells: string[]) =>
    `<thead><tr>${cells.map((c) => `<th scope="col">${c}</th>`).join('')}</tr></thead>`
  return `  <section class="now" aria-label="${TEXT.now[lang]}">
    <h2>${TEXT.now[lang]} <span class="now-at" aria-live="polite">${TEXT.loading[lang]}</span></h2>
    <p>${TEXT.nowHow[lang]}</p>
    <div class="now-grid">
      <table class="now-dataloggers"><caption>${TEXT.dataloggers[lang]}</caption>${head('', TEXT.lastSample[lang], TEXT.age[lang], TEXT.state[lang])}<tbody></tbody></table>
      <table class="now-meters"><caption>${TEXT.mainMeters[lang]}</caption>${head(TEXT.meter[lang], TEXT.reading[lang], TEXT.todaySoFar[lang])}<tbody></tbody></table>
      <div class="now-alerts"><h3>${TEXT.firing[lang]}</h3><ul></ul></div>
    </div>
  </section>
`
}

export function dashboardPage(
  lang: Language,
  charts: readonly ChartName[],
  status: DataStatus,
  cost: CampusCost,
  signIn?: SignIn,
): string {
  const { zone } = status
  const untilText = (name: ChartName) => {
    const until = status.until[name]
    return until === undefined ? TEXT.none[lang] : TEXT.until[lang].replace('{time}', localDateTime(until, lang, zone))
  }
  const figures = charts
    .map(
      (name) => `    <figure>
      <figcaption>${TEXT.captions[name][lang]}</figcaption>
      <div class="plot"><canvas data-chart="${name}" role="img" aria-label="${TEXT.captions[name][lang]}"></canvas></div>
      <p class="until${status.stale[name] ? ' stale' : ''}">${untilText(name)}</p>
      <p class="status" aria-live="polite">${TEXT.loading[lang]}</p>
    </figure>`,
    )
    .join('\n')
  const stale = charts.filter((c) => status.stale[c])
  const oldest = Math.min(...stale.map((c) => status.until[c] ?? Number.POSITIVE_INFINITY))
  // every text here is the service's own (the zone is checked as an IANA name at start): nothing to escape
  const warning = stale.length
    ? `  <p class="notice stale" role="alert">${TEXT.stale[lang]
        .replace('{charts}', stale.map((c) => TEXT.names[c][lang]).join(', '))
        .replace('{time}', Number.isFinite(oldest) ? localDateTime(oldest, lang, zone) : TEXT.none[lang])}</p>\n`
    : ''
  const switcher = (['it', 'en'] as const)
    .map(
      (l) =>
        `<a href="/dashboard?lang=${l}" hreflang="${l}" lang="${l}"${l === lang ? ' aria-current="page"' : ''}>${LANGUAGE_NAMES[l]}</a>`,
    )
    .join('')
  // the script signs in (code + PKCE) with these; without them the page has no account controls
  const account = signIn
    ? `    <section class="account" aria-label="${TEXT.account[lang]}" data-issuer="${attribute(signIn.issuer)}" data-client-id="${attribute(signIn.clientId)}">
      <span class="who" aria-live="polite"></span>
      <button type="button" class="sign-in">${TEXT.signIn[lang]}</button>
      <button type="button" class="sign-out" hidden>${TEXT.signOut[lang]}</button>
    </section>
`
    : ''
  const reportFormat = `format=text&amp;lang=${lang}`
  return `<!doctype html>
<html lang="${lang}">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>${TEXT.title[lang]}</title>
  <link rel="icon" href="/favicon.ico" type="image/svg+xml">
  <link rel="stylesheet" href="/dashboard/assets/dashboard.css">
  <script src="/dashboard/assets/chart.umd.min.js" defer></script>
  <script src="/dashboard/assets/dashboard.js" defer></script>
</head>
<body>
  <header>
    <div>
      <h1>${TEXT.title[lang]}</h1>
      <p>${TEXT.intro[lang].replace('{zone}', zone)}</p>
    </div>
    <nav class="lang" aria-label="${TEXT.language[lang]}">${switcher}</nav>
${account}  </header>
  <noscript><p class="notice">${TEXT.noscript[lang]}</p></noscript>
${warning}${nowSection(lang)}${costSection(cost, lang)}  <main>
${figures}
  </main>
  <footer>
    ${TEXT.reports[lang]}:
    <a href="/report/pv?${reportFormat}">PV</a> ·
    <a href="/report/water?${reportFormat}">${lang === 'it' ? 'Acqua' : 'Water'}</a> ·
    <a href="/report/palinsesti?${reportFormat}">${lang === 'it' ? 'Palinsesti' : 'Operating schedules'}</a> ·
    <a href="/docs">${TEXT.api[lang]}</a>
  </footer>
</body>
</html>
`
}
