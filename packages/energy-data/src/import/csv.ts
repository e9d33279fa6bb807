/**
 * One line of delimited text into fields (RFC 4180 quoting: `"a,b"`, `"say ""hi"""`).
 * Fields cannot span lines: measurement files hold none. Returns undefined on a broken quote.
 */
export function splitLine(line: string, separator: string): string[] | undefined {
  const fields: string[] = []
  let i = 0
  while (true) {
    if (line[i] === '"') {
      let value = ''
      i++
      while (true) {
        const close = line.indexOf('"', i)
        if (close < 0) return undefined
        value += line.slice(i, close)
        if (line[close + 1] === '"') {
          value += '"'
          i = close + 2
          continue
        }
        i = close + 1
        break
      }
      fields.push(value)
      if (i === line.length) return fields
      if (line[i] !== separator) return undefined
      i++
    } else {
      const next = line.indexOf(separator, i)
      if (next < 0) {
        fields.push(line.slice(i))
        return fields
      }
      fields.push(line.slice(i, next))
      i = next + 1
    }
  }
}
