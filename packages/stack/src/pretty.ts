/** Turns one pino JSON line of a child service into a short readable line. Other text passes through. */
const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO ', 40: 'WARN ', 50: 'ERROR', 60: 'FATAL' }

export function prettyLine(line: string): string {
  if (!line.startsWith('{')) return line
  let entry: Record<string, unknown>
  try {
    entry = JSON.parse(line) as Record<string, unknown>
  } catch {
    return line
  }
  const time = new Date(typeof entry.time === 'number' ? entry.time : Date.now()).toTimeString().slice(0, 8)
  const level = LEVELS[entry.level as number] ?? String(entry.level)
  const parts = [time, level, String(entry.msg ?? '')]
  const req = entry.req as { method?: string; url?: string } | undefined
  const res = entry.res as { statusCode?: number } | undefined
  if (req?.method) parts.push(`${req.method} ${req.url}`)
  if (res?.statusCode) parts.push(String(res.statusCode))
  if (typeof entry.responseTime === 'number') parts.push(`${entry.responseTime.toFixed(1)} ms`)
  const err = entry.err as { message?: string } | undefined
  if (err?.message) parts.push(`- ${err.message}`)
  for (const key of ['database', 'url', 'address']) {
    if (typeof entry[key] === 'string') parts.push(`(${entry[key]})`)
  }
  return parts.join(' ')
}
