import type { ChartName } from '../charts/charts.ts'
import type { Language } from '../charts/i18n.ts'

const TEXT = {
  title: { it: 'Cruscotto energetico del campus', en: 'Campus energy dashboard' },
  intro: {
    it: 'Fotovoltaico, bilancio energetico e acqua, aggiornati ogni 15 minuti.',
    en: 'Photovoltaic, energy balance and water, updated every 15 minutes.',
  },
  language: { it: 'Lingua', en: 'Language' },
  loading: { it: 'Caricamento…', en: 'Loading…' },
  reports: { it: 'Rapporti', en: 'Reports' },
  api: { it: 'Documentazione API', en: 'API documentation' },
  noscript: {
    it: 'I grafici richiedono JavaScript; i rapporti in fondo alla pagina funzionano anche senza.',
    en: 'The charts need JavaScript; the reports linked at the bottom of the page work without it.',
  },
  captions: {
    fotovoltaico: {
      it: 'Produzione per impianto, ultimi 7 giorni, dettaglio 15 minuti (kW).',
      en: 'Production per plant, last 7 days, 15-minute detail (kW).',
    },
    bilancio: {
      it: 'Aule P: produzione fotovoltaica e prelievo dalla rete rispetto al consumo, ultimi 7 giorni (kW).',
      en: 'Aule P: photovoltaic production and grid withdrawal against consumption, last 7 days (kW).',
    },
    acqua: {
      it: 'Consumo giornaliero, ultimi 30 giorni completi (m³).',
      en: 'Daily use, last 30 complete days (m³).',
    },
    fontanelle: {
      it: 'Portata di ciascuna fontanella, ultimi 7 giorni (L/h).',
      en: 'Flow of each drinking fountain, last 7 days (L/h).',
    },
  } satisfies Record<ChartName, Record<Language, string>>,
} as const

const LANGUAGE_NAMES: Record<Language, string> = { it: 'Italiano', en: 'English' }

/** The dashboard page: markup only; the drawing is done by the served script, so the CSP allows no inline code. */
export function dashboardPage(lang: Language, charts: readonly ChartName[]): string {
  const figures = charts
    .map(
      (name) => `    <figure>
      <figcaption>${TEXT.captions[name][lang]}</figcaption>
      <div class="plot"><canvas data-chart="${name}" role="img" aria-label="${TEXT.captions[name][lang]}"></canvas></div>
      <p class="status" aria-live="polite">${TEXT.loading[lang]}</p>
    </figure>`,
    )
    .join('\n')
  const switcher = (['it', 'en'] as const)
    .map(
      (l) =>
        `<a href="/dashboard?lang=${l}" hreflang="${l}" lang="${l}"${l === lang ? ' aria-current="page"' : ''}>${LANGUAGE_NAMES[l]}</a>`,
    )
    .join('')
  const reportFormat = `format=text&amp;lang=${lang}`
  return `<!doctype html>
<html lang="${lang}">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>${TEXT.title[lang]}</title>
  <link rel="stylesheet" href="/dashboard/assets/dashboard.css">
  <script src="/dashboard/assets/chart.umd.min.js" defer></script>
  <script src="/dashboard/assets/dashboard.js" defer></script>
</head>
<body>
  <header>
    <div>
      <h1>${TEXT.title[lang]}</h1>
      <p>${TEXT.intro[lang]}</p>
    </div>
    <nav class="lang" aria-label="${TEXT.language[lang]}">${switcher}</nav>
  </header>
  <noscript><p class="notice">${TEXT.noscript[lang]}</p></noscript>
  <main>
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
