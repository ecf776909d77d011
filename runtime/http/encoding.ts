/**
 * Content negotiation for the precompressed representations: brotli when the
 * client accepts it, else gzip, else identity (RFC 9110 Accept-Encoding,
 * q=0 meaning "not acceptable").
 */
import type { Encoding } from '../../core/snapshot.ts'

export type { Encoding }

export function negotiateEncoding(acceptEncoding: string | null): Encoding | undefined {
  if (!acceptEncoding) return undefined
  const q = new Map<string, number>()
  for (const part of acceptEncoding.toLowerCase().split(',')) {
    const [token, ...params] = part.trim().split(';')
    if (!token) continue
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith('q='))
    const weight = qParam ? Number(qParam.slice(2)) : 1
    q.set(token.trim(), Number.isFinite(weight) ? weight : 0)
  }
  const br = weightOf(q, 'br')
  const gzip = weightOf(q, 'gzip')
  if (br > 0 && br >= gzip) return 'br'
  if (gzip > 0) return 'gzip'
  return undefined
}

/** A coding's weight: its own, else the wildcard's, else 0 (not acceptable). */
function weightOf(q: Map<string, number>, name: string): number {
  return q.get(name) ?? q.get('*') ?? 0
}
