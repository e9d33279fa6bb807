import { dateFormat } from '../domain/time.ts'

/** Languages of the charts, reports and dashboard: Italian (the default) and English. */
export const LANGUAGES = ['it', 'en'] as const
export type Language = (typeof LANGUAGES)[number]

export const LOCALES: Record<Language, string> = { it: 'it-IT', en: 'en-GB' }

/** How local dates in `zone` are written for people: day and month, with the weekday, year and time asked for. */
export const localDateFormat = (
  lang: Language,
  zone: string,
  parts: { weekday?: boolean; year?: boolean; time?: boolean } = {},
): Intl.DateTimeFormat =>
  dateFormat(LOCALES[lang], {
    timeZone: zone,
    ...(parts.weekday ? { weekday: 'short' } : {}),
    day: '2-digit',
    month: '2-digit',
    ...(parts.year ? { year: 'numeric' } : {}),
    ...(parts.time ? { hour: '2-digit', minute: '2-digit', hourCycle: 'h23' } : {}),
  })

/** A local date for people, `21/10/2025`, with its time, `21/10/2025, 01:00`, unless `withTime` is false. */
export const localDateTime = (instant: number, lang: Language, zone: string, withTime = true): string =>
  localDateFormat(lang, zone, { year: true, time: withTime }).format(new Date(instant))

/** Display names of the PV plants (columns of the pv group) and of the drinking fountains (water group). */
export const PLANT_NAMES = {
  tot_pv_aule_p: { it: 'Aule P', en: 'Aule P' },
  tot_pv_aule_r: { it: 'Aule R', en: 'Aule R' },
  tot_pv_castelfidardo: { it: 'Castelfidardo', en: 'Castelfidardo' },
  tot_pv_cit: { it: 'Cittadella', en: 'Cittadella' },
  tot_pv_ec: { it: 'Energy Center', en: 'Energy Center' },
  tot_pv_i3p: { it: 'I3P', en: 'I3P' },
} as const

export const FOUNTAIN_NAMES = {
  tot_font_aula_magna: { it: 'Aula Magna', en: 'Main hall' },
  tot_font_aule_p: { it: 'Aule P', en: 'Aule P' },
  tot_font_corr_denerg: { it: 'Corridoio DENERG', en: 'DENERG corridor' },
  tot_font_corr_nord: { it: 'Corridoio nord', en: 'North corridor' },
  tot_font_corr_sud: { it: 'Corridoio sud', en: 'South corridor' },
} as const

export const CHART_TEXT = {
  fotovoltaico: {
    title: { it: 'Produzione fotovoltaica per impianto', en: 'Photovoltaic production by plant' },
    y: { it: 'Potenza', en: 'Power' },
    total: { it: 'Totale campus (misurato)', en: 'Campus total (metered)' },
  },
  bilancio: {
    title: {
      it: 'Bilancio energetico Aule P: fotovoltaico e prelievo dalla rete',
      en: 'Aule P energy balance: photovoltaic and grid withdrawal',
    },
    y: { it: 'Potenza', en: 'Power' },
    production: { it: 'Produzione fotovoltaica', en: 'Photovoltaic production' },
    grid: { it: 'Prelievo dalla rete', en: 'Grid withdrawal' },
    consumption: { it: 'Consumo edificio', en: 'Building consumption' },
  },
  acqua: {
    title: { it: 'Consumo giornaliero di acqua', en: 'Daily water use' },
    y: { it: 'Volume', en: 'Volume' },
    perDay: { it: 'giorno', en: 'day' },
    main: { it: 'Sede centrale', en: 'Main site' },
    fountains: { it: 'Fontanelle (totale)', en: 'Drinking fountains (total)' },
  },
  fontanelle: {
    title: { it: 'Prelievo dalle fontanelle', en: 'Drinking fountain draw-off' },
    y: { it: 'Portata', en: 'Flow' },
  },
  x15m: { it: 'Ora locale', en: 'Local time' },
  xDay: { it: 'Giorno', en: 'Day' },
  window: { it: 'Dal {from} al {to} ({zone})', en: 'From {from} to {to} ({zone})' },
  noData: { it: 'nessun dato', en: 'no data' },
  coverage: {
    it: "(n/N) dopo un giorno: n dei suoi N quarti d'ora misurati",
    en: '(n/N) after a day: n of its N quarter hours measured',
  },
} as const

export const pick = (text: Record<Language, string>, lang: Language): string => text[lang]
