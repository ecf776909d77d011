/**
 * Range requests (RFC 9110 14) for the bulk exports: one `bytes` range, or
 * the whole file. A multi-range request gets the whole file (200), which the
 * RFC allows; a malformed Range header is ignored, as the RFC says.
 */

export type RangeDecision =
  | { kind: 'whole' }
  | { kind: 'range'; start: number; end: number }
  | { kind: 'unsatisfiable' }

/** What `Range` asks of a file of `size` bytes; `end` is inclusive. */
export function parseByteRange(header: string | null, size: number): RangeDecision {
  if (header === null) return { kind: 'whole' }
  const match = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header)
  if (!match) return { kind: 'whole' }
  const [, first, last] = match as unknown as [string, string, string]
  if (first === '' && last === '') return { kind: 'whole' }
  if (first === '') {
    // A suffix: the last N bytes.
    const length = Number(last)
    if (length === 0 || size === 0) return { kind: 'unsatisfiable' }
    return { kind: 'range', start: Math.max(0, size - length), end: size - 1 }
  }
  const start = Number(first)
  if (last !== '' && Number(last) < start) return { kind: 'whole' }
  if (start >= size) return { kind: 'unsatisfiable' }
  return { kind: 'range', start, end: last === '' ? size - 1 : Math.min(Number(last), size - 1) }
}

/**
 * True when If-Range lets the range apply: absent, the current strong ETag,
 * or the exact Last-Modified date. Anything else (another snapshot's ETag)
 * means the file changed since the client's partial copy: send it whole.
 */
export function ifRangeAllows(header: string | null, etag: string, lastModified: string): boolean {
  if (header === null) return true
  const value = header.trim()
  if (value.startsWith('"') || value.startsWith('W/')) return value === etag
  return value === lastModified
}
