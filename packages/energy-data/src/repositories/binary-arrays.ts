/**
 * One-dimensional array parameters in PostgreSQL's binary format (`array_send`): one buffer for a
 * whole column of a batch, where the text form (`{1,2,3}`) makes a string of every element first
 * and the server parses each back. node-postgres sends a Buffer parameter as binary; the statement
 * casts it (`$1::int8[]`), which names the element type the server checks the buffer against.
 * Written here: no npm package writes PostgreSQL's binary arrays without a driver of its own.
 */

const ELEMENT = {
  bool: { oid: 16, size: 1 },
  int4: { oid: 23, size: 4 },
  int8: { oid: 20, size: 8 },
  float8: { oid: 701, size: 8 },
} as const

type ElementType = keyof typeof ELEMENT

const HEADER = 20
const TWO_32 = 2 ** 32

/** `count` elements of `type`, the i-th being `element(i)` (numbers; booleans for bool), none null. */
export function binaryArray(type: ElementType, count: number, element: (i: number) => number | boolean): Buffer {
  const { oid, size } = ELEMENT[type]
  const buffer = Buffer.allocUnsafe(HEADER + count * (4 + size))
  const view = new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength)
  view.setInt32(0, 1) // dimensions
  view.setInt32(4, 0) // no null
  view.setInt32(8, oid)
  view.setInt32(12, count)
  view.setInt32(16, 1) // lower bound
  let at = HEADER
  for (let i = 0; i < count; i++) {
    view.setInt32(at, size)
    at += 4
    const value = element(i)
    if (type === 'bool') view.setUint8(at, value ? 1 : 0)
    else if (type === 'int4') view.setInt32(at, value as number)
    else if (type === 'float8') view.setFloat64(at, value as number)
    else {
      // a whole number within 2^53 as two 32-bit halves (a BigInt per element would be an object each)
      const high = Math.floor((value as number) / TWO_32)
      view.setInt32(at, high)
      view.setUint32(at + 4, (value as number) - high * TWO_32)
    }
    at += size
  }
  return buffer
}
