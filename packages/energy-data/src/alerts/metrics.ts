import { serviceLabelledGauge } from '@campus/shared'
import type { AlertEngine } from './engine.ts'

/** /metrics: the alerts firing by rule and subject, and each datalogger's last-sample age. */
export function alertMetrics(engine: AlertEngine) {
  return [
    serviceLabelledGauge(
      'energy_alerts_firing',
      'Alerts firing (1) by rule and what they watch, as of the last evaluation',
      ['rule', 'kind', 'severity', 'datalogger', 'meter'],
      () =>
        engine
          .open()
          .filter((a) => a.state === 'firing')
          .map((a) => ({
            labels: {
              rule: a.rule_name,
              kind: a.labels.kind ?? '',
              severity: a.labels.severity ?? '',
              datalogger: a.labels.datalogger ?? '',
              meter: a.labels.meter ?? '',
            },
            value: 1,
          })),
    ),
    serviceLabelledGauge(
      'energy_datalogger_last_sample_age_seconds',
      "Seconds since each datalogger's newest sample arrived (absent: none ever)",
      ['datalogger'],
      () =>
        engine
          .dataloggerAges()
          .filter((d) => d.ageSeconds !== null)
          .map((d) => ({ labels: { datalogger: d.datalogger }, value: d.ageSeconds as number })),
    ),
  ]
}
