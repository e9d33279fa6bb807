/**
 * The three `data_format` encodings of measurement rows, written piece by piece so a response
 * never has to exist whole in memory. Rows arrive as arrays in field order with the time as
 * epoch milliseconds.
 */
export const DATA_FORMATS = {
  raw: 'application/json; charset=utf-8',
  csv: 'text/csv; charset=utf-8',
  txt: 'text/plain; charset=utf-8',
} as const

export type DataFormat = keyof typeof DATA_FORMATS
export const DATA_FORMAT_VALUES = Object.keys(DATA_FORMATS) as DataFormat[]

export const DATA_FORMAT_DESCRIPTION =
  '`raw`: a JSON array of objects (application/json). `csv`: RFC 4180 comma-separated values with a ' +
  'header line (text/csv). `txt`: tab-separated values with a header line (text/plain). Timestamps are ' +
  'ISO 8601 with the offset of `timezone`; a missing value is JSON null, an empty CSV/TXT field.'

export type FieldKind = 'time' | 'number' | 'string'
export interface Field {
  readonly name: string
  readonly kind: FieldKind
}

export interface RowEncoder {
  readonly begin: string
  readonly end: string
  /** Encodes a batch; `first` says whether it opens the body (JSON needs no comma then). */
  encode(rows: readonly unknown[][], first: boolean): string
}

const finite = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v)

function csvText(v: unknown): string {
  if (v === null || v === undefined) return ''
  const s = String(v)
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s
}

function txtText(v: unknown): string {
  return v === null || v === undefined ? '' : String(v).replace(/[\t\r\n]/g, ' ')
}

export function rowEncoder(
  format: DataFormat,
  fields: readonly Field[],
  writeTime: (ms: number) => string,
): RowEncoder {
  if (format === 'raw') {
    const keys = fields.map((f, i) => `${i === 0 ? '{' : ','}${JSON.stringify(f.name)}:`)
    const encodeRow = (row: readonly unknown[]): string => {
      let out = ''
      for (let i = 0; i < fields.length; i++) {
        const v = row[i]
        const kind = (fields[i] as Field).kind
        out += keys[i]
        if (kind === 'time') out += `"${writeTime(v as number)}"`
        else if (kind === 'number') out += finite(v) ? String(v) : 'null'
        else out += v === null || v === undefined ? 'null' : JSON.stringify(String(v))
      }
      return `${out}}`
    }
    return {
      begin: '[',
      end: ']',
      encode(rows, first) {
        let out = ''
        for (let r = 0; r < rows.length; r++) {
          if (r > 0 || !first) out += ','
          out += encodeRow(rows[r] as unknown[])
        }
        return out
      },
    }
  }
  const separator = format === 'csv' ? ',' : '\t'
  const text = format === 'csv' ? csvText : txtText
  const eol = format === 'csv' ? '\r\n' : '\n'
  const encodeRow = (row: readonly unknown[]): string => {
    let out = ''
    for (let i = 0; i < fields.length; i++) {
      if (i > 0) out += separator
      const v = row[i]
      const kind = (fields[i] as Field).kind
      if (kind === 'time') out += writeTime(v as number)
      else if (kind === 'number') out += finite(v) ? String(v) : ''
      else out += text(v)
    }
    return out + eol
  }
  return {
    begin: fields.map((f) => f.name).join(separator) + eol,
    end: '',
    encode(rows) {
      let out = ''
      for (const row of rows) out += encodeRow(row)
      return out
    },
  }
}
