/**
 * Payload factories: one for snapshot files (precompressed copies on disk),
 * one for bodies computed at request time (compressed on first demand, then
 * kept with the cached entry).
 */
import { createHash } from 'node:crypto'
import { promisify } from 'node:util'
import zlib from 'node:zlib'
import type { Encoding } from './encoding.ts'
import type { Payload } from './respond.ts'

const brotli = promisify(zlib.brotliCompress)
const gzip = promisify(zlib.gzip)

/**
 * Computed bodies are compressed per request, once per cache entry, and a
 * CDN in front caches them again: the fastest levels win. On a 100-job page
 * (169 KB) brotli quality 1 takes 0.6 ms for 27 KB where quality 4 took
 * 2.2 ms for 24 KB; gzip level 1 1.2 ms for 30 KB against level 6's 2.5 ms
 * for 24 KB. Snapshot files are compressed harder, once, at build time.
 */
const COMPUTED_BROTLI_QUALITY = 1
const COMPUTED_GZIP_LEVEL = 1

/** Below this, compression costs more than it saves. */
const MIN_COMPRESS_BYTES = 512

export function hashBody(body: Buffer): string {
  return createHash('sha256').update(body).digest('base64url').slice(0, 22)
}

export function computedPayload(body: Buffer, contentType?: string): Payload {
  const encoded: Partial<Record<Encoding, Promise<Buffer>>> = {}
  return {
    body,
    hash: hashBody(body),
    contentType,
    encoded(encoding) {
      if (body.length < MIN_COMPRESS_BYTES) return Promise.resolve(undefined)
      encoded[encoding] ??=
        encoding === 'br'
          ? brotli(body, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: COMPUTED_BROTLI_QUALITY, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: body.length } })
          : gzip(body, { level: COMPUTED_GZIP_LEVEL })
      return encoded[encoding]
    },
  }
}

export function filePayload(
  body: Buffer,
  hash: string,
  readEncoded: (encoding: Encoding) => Promise<Buffer | undefined>,
  contentType?: string,
): Payload {
  return { body, hash, contentType, encoded: readEncoded }
}
