import { JSON_UTF8 } from '@campus/shared'
import Type from 'typebox'
import { buildChart, CHART_NAMES, type ChartName, DAILY_DAYS, SERIES_DAYS } from '../charts/charts.ts'
import { sendCached } from '../dashboard/http-cache.ts'
import { routePlugin } from '../energy-app.ts'
import { PUBLIC_ROUTE } from '../plugins/auth.ts'
import { CACHING_NOTE, cached, Lang, NotFoundBody, NotModified, ValidationErrorBody } from '../schemas/views.ts'

const windowNote = (zone: string) =>
  'The window ends with the newest quarter hour stored for the chart (now when there is none): when the data ' +
  'stops before today the chart shows the last days it holds, and its subtitle says which. Timestamps are ' +
  `\`time_15m\`, the start of each quarter hour; labels are local time in ${zone} (ENERGY_TIMEZONE); the x axis ` +
  'ticks at local midnights. A quarter hour (or day) without data is `null` and drawn as a gap, never as zero. ' +
  'Units come from the series catalogue (see the `/data` row schemas).'

const DESCRIPTIONS: Record<ChartName, { summary: string; description: string }> = {
  fotovoltaico: {
    summary: 'Photovoltaic production per plant in kW (stacked area, 7 days, 15 min)',
    description:
      `Stacked area of the mean power of each photovoltaic plant (Aule P, Aule R, Castelfidardo, Cittadella, ` +
      `Energy Center, I3P: the \`tot_pv_*\` plant columns of the pv group) over the last ${SERIES_DAYS} days ` +
      'in 15-minute detail (672 points). The pv columns hold the mean kW of each quarter hour: drawn as they ' +
      'are. The metered campus total (`tot_pv`) is drawn as a dashed line on its own stack: where a plant has no ' +
      'reading the pile stops short of it, rather than passing a part for the whole.',
  },
  bilancio: {
    summary: 'PV production and grid withdrawal in kW (stacked area, 7 days, 15 min)',
    description:
      'Energy balance of the Aule P building, the building metered for both production and consumption ' +
      `(aulep group, mean kW per quarter hour), over the last ${SERIES_DAYS} days in 15-minute detail: a stacked ` +
      'area of PV production (`tot_pv_prod`) and grid withdrawal (`max(consumo_aula_1p - tot_pv_prod, 0)` in each ' +
      'quarter hour), with the building consumption (`consumo_aula_1p`) drawn as a dashed line on its own stack; ' +
      'where the stack rises above the line, PV is feeding surplus to the grid.',
  },
  acqua: {
    summary: 'Daily water use in m³ (columns, 30 days)',
    description:
      `Columns of the daily water volume (m³) over the last ${DAILY_DAYS} complete local days holding data ` +
      '(midnight to midnight in the service zone, so DST days hold 23 or 25 hours): the main site meter ' +
      '(`tot_sede_centrale`) and, beside it, the sum of the five drinking fountains (`tot_font_*`). The water ' +
      "columns hold the volume of each quarter hour: a day's column adds up its measured quarter hours, and a day " +
      'with missing ones says how many of its own were measured after its label, `(88/96)` (of the series with ' +
      'the fewest). A day still in progress is left out rather than drawn as a short column.',
  },
  fontanelle: {
    summary: 'Drinking fountain draw-off per fountain in L/h (stacked area, 7 days, 15 min)',
    description:
      'The contract describes this chart with the words of the balance chart; it draws the drinking fountains ' +
      `the same way: a stacked area of the flow of each fountain (\`tot_font_*\` of the water group) over the last ` +
      `${SERIES_DAYS} days in 15-minute detail. The water columns hold the m³ of each quarter hour, drawn as the ` +
      'mean flow over it in L/h (m³ x 1000 / 0.25 h). A fountain flowing at night or at weekends stands out.',
  },
}

const ChartConfigBody = Type.Object(
  {
    type: Type.Enum(['line', 'bar'], { description: 'Chart.js chart type.' }),
    data: Type.Object({
      labels: Type.Array(Type.String(), { description: 'One label per point: local time or local day.' }),
      datasets: Type.Array(
        Type.Object(
          {
            label: Type.String(),
            data: Type.Array(Type.Union([Type.Number(), Type.Null()])),
          },
          { additionalProperties: true },
        ),
      ),
    }),
    options: Type.Object({}, { additionalProperties: true, description: 'Chart.js options: titles, axes, legend.' }),
  },
  {
    title: 'ChartConfiguration',
    description:
      'A Chart.js 4 configuration, ready for `new Chart(canvas, config)`: the library is served by this service ' +
      'at `/dashboard/assets/chart.umd.min.js`. Plain JSON: no callbacks, no time adapter needed.',
    examples: [
      {
        type: 'line',
        data: {
          labels: ['lun 20/10, 12:00', 'lun 20/10, 12:15'],
          datasets: [{ label: 'Aule P', data: [41.2, 40.8], stack: 'total', fill: 'origin', pointRadius: 0 }],
        },
        options: {
          plugins: { title: { display: true, text: 'Produzione fotovoltaica per impianto' } },
          scales: { y: { stacked: true, title: { display: true, text: 'Potenza (kW)' } } },
        },
      },
    ],
  },
)

/** Chart.js configurations of the public charts. */
export const chartRoutes = routePlugin('energy-chart-routes', (app) => {
  const { db, settings, now } = app
  for (const name of CHART_NAMES) {
    app.get(
      `/chart/${name}`,
      {
        config: PUBLIC_ROUTE,
        schema: {
          tags: ['Chart'],
          summary: DESCRIPTIONS[name].summary,
          description: `${DESCRIPTIONS[name].description}\n\n${windowNote(settings.zone)}\n\n${CACHING_NOTE}`,
          querystring: Type.Object({ lang: Type.Optional(Lang) }),
          response: {
            200: cached(ChartConfigBody),
            304: NotModified,
            404: NotFoundBody,
            422: ValidationErrorBody,
          },
        },
      },
      async (request, reply) => {
        const config = await buildChart(db, name, {
          lang: request.query.lang ?? 'it',
          zone: settings.zone,
          now: now(),
        })
        return sendCached(request, reply, JSON.stringify(config), JSON_UTF8)
      },
    )
  }
})
