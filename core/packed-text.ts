/**
 * Many short strings stored one after another, with offsets by position in
 * UTF-16 code units: index/jobs.bin's hashes, slugs and ids. ASCII text
 * (slugs always is, ids nearly always) stays the bytes read from the file,
 * and a string is made only for the one asked for: decoding the slugs and
 * ids into strings at load cost a 1M-job server ~0.2 s of every start (V8
 * copying 80 MB into fresh heap pages), for a few lookups per request.
 * Other text, and text read on every request (the hashes), is one string.
 */
import { isAscii } from 'node:buffer'

export interface PackedText {
  /** The strings joined: ASCII bytes (one byte per code unit), or a string. */
  joined: string | Buffer
  /** offsets[p]..offsets[p + 1] is the string at position p. */
  offsets: Uint32Array
}

/** bytes[start, end) (UTF-8) as PackedText's `joined`: a view on them when ASCII, else the decoded string. */
export function packedJoined(bytes: Buffer, start: number, end: number): string | Buffer {
  const view = bytes.subarray(start, end)
  return isAscii(view) ? view : view.toString('utf8')
}

/** The code units start..end of a PackedText's joined strings, as a string. */
export function textSlice(joined: string | Buffer, start: number, end: number): string {
  return typeof joined === 'string' ? joined.slice(start, end) : joined.toString('latin1', start, end)
}

/** The string at `position`. */
export function textAt({ joined, offsets }: PackedText, position: number): string {
  return textSlice(joined, offsets[position]!, offsets[position + 1]!)
}

/** The joined strings as one string (what code reading every code unit needs: the slug table's hashes). */
export function joinedString(joined: string | Buffer): string {
  return typeof joined === 'string' ? joined : joined.toString('latin1')
}
