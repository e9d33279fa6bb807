/** Turns one pino JSON line of a child service into a short readable one (pino-pretty); other text passes through. */
import { prettyFactory } from 'pino-pretty'

interface LogEntry {
  req?: { method?: string; url?: string }
  res?: { statusCode?: number }
  responseTime?: unknown
}

const pretty = prettyFactory({
  colorize: false,
  singleLine: true,
  translateTime: 'SYS:HH:MM:ss',
  // the request line says what matters of req/res; the rest (ids, host, pid) is noise on a console
  ignore: 'pid,hostname,service,reqId,req,res,responseTime',
  messageFormat: (log, messageKey) => {
    const { req, res, responseTime } = log as LogEntry
    return [
      String(log[messageKey] ?? ''),
      req?.method && `${req.method} ${req.url}`,
      res?.statusCode,
      typeof responseTime === 'number' && `${responseTime.toFixed(1)} ms`,
    ]
      .filter(Boolean)
      .join(' ')
  },
})

export function prettyLine(line: string): string {
  return pretty(line).replace(/\n$/, '')
}
