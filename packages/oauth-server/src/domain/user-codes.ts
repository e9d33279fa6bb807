/**
 * RFC 8628 6.1: the code a person types. Eight letters of a 20-letter alphabet without vowels
 * (no words, no 0/O or 1/I confusion), shown as XXXX-XXXX: about 34.6 bits, enough for a code
 * that lives minutes while its entry is throttled. Case, spaces and dashes do not matter.
 */
import { randomInt } from 'node:crypto'

const ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ'
const LENGTH = 8

export function generateUserCode(): string {
  let code = ''
  for (let i = 0; i < LENGTH; i++) code += ALPHABET[randomInt(ALPHABET.length)]
  return `${code.slice(0, 4)}-${code.slice(4)}`
}

/** The code as stored (its digest is taken of this): upper case, separators dropped. */
export const normalizeUserCode = (typed: string): string => typed.toUpperCase().replace(/[\s-]/g, '')
