import Negotiator from 'negotiator'

/**
 * The value of the media type `Accept` prefers among `byMediaType`'s (RFC 9110 weights; on a
 * tie, or for `*` / `*\/*`, the first listed), or undefined when it accepts none of them.
 */
export function preferredByAccept<T>(accept: string | undefined, byMediaType: Record<string, T>): T | undefined {
  const preferred = new Negotiator({ headers: { accept: accept ?? '*/*' } }).mediaType(Object.keys(byMediaType))
  return preferred === undefined ? undefined : byMediaType[preferred]
}
