/**
 * One value of a service's Prometheus exposition at `${url}/metrics`: the first sample of `name`
 * whose labels include every one of `labels`; NaN when there is none.
 */
export async function scrapeMetric(url: string, name: string, labels: Record<string, string> = {}): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text()
  const wanted = Object.entries(labels).map(([key, value]) => `${key}="${value}"`)
  for (const line of text.split('\n')) {
    const match = /^([^\s{]+)(\{[^}]*\})? (\S+)$/.exec(line)
    if (match?.[1] !== name) continue
    if (wanted.every((label) => match[2]?.includes(label))) return Number(match[3])
  }
  return Number.NaN
}
