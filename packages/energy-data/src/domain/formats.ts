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

/** How one field's value is written: by the database, as text ready to join (see the repository). */
export type FieldKind = 'time' | 'number' | 'string'
export interface Field {
  readonly name: string
  readonly kind: FieldKind
}

export function separatorOf(format: DataFormat): string {
  return format === 'csv' ? ',' : format === 'txt' ? '\t' : ','
}

export interface RowEncoder {
  readonly begin: string
  readonly end: string
  /** Encodes a batch; `first` says whether it opens the body (JSON needs no comma then). */
  encode(rows: readonly (readonly [number, string])[], first: boolean): string
}

/**
 * Rows arrive as `[epoch ms, text of the other fields]`, the text already encoded for the format
 * by the database (numbers, nulls, quoting), so only the timestamp is written here.
 */
export function rowEncoder(
  format: DataFormat,
  fields: readonly Field[],
  writeTime: (ms: number) => string,
): RowEncoder {
  const timeName = fields[0]?.name ?? 'time_15m'
  if (format === 'raw') {
    const open = `{${JSON.stringify(timeName)}:"`
    return {
      begin: '[',
      end: ']',
      encode(rows, first) {
        let out = ''
        for (let r = 0; r < rows.length; r++) {
          const row = rows[r] as readonly [number, string]
          out += `${r > 0 || !first ? ',' : ''}${open}${writeTime(row[0])}",${row[1]}}`
        }
        return out
      },
    }
  }
  const separator = separatorOf(format)
  const eol = format === 'csv' ? '\r\n' : '\n'
  return {
    begin: fields.map((f) => f.name).join(separator) + eol,
    end: '',
    encode(rows) {
      let out = ''
      for (const row of rows) out += writeTime(row[0]) + separator + row[1] + eol
      return out
    },
  }
}
