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
        encoding === 'br' ? brotli(body, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 4 } }) : gzip(body, { level: 6 })
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
