/**
 * Payload factories: one for snapshot files with precompressed copies on
 * disk (the OpenAPI document), one for snapshot bodies compressed on demand
 * and remembered by content hash (single jobs, v1 pages), one for bodies
 * computed at request time (compressed on first demand, then kept with the
 * cached entry).
 */
import { contentHash } from '../../core/content-hash.ts'
import { LRUCache } from 'lru-cache'
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
 * for 24 KB. Single jobs and v1 pages are compressed the same way (the
 * build no longer precompresses them); only the OpenAPI document has
 * precompressed copies on disk.
 */
const COMPUTED_BROTLI_QUALITY = 1
const COMPUTED_GZIP_LEVEL = 1

/** Below this, compression costs more than it saves. */
const MIN_COMPRESS_BYTES = 512

/**
 * A body computed at request time. Its compressed copies are made once, on
 * first demand, into buffers from `allocate` (the response cache's ring,
 * for list pages) or of their own.
 */
export function computedPayload(
  body: Buffer,
  contentType?: string,
  allocate: (length: number) => Buffer = Buffer.allocUnsafeSlow,
): Payload {
  const encoded: Partial<Record<Encoding, Promise<Buffer>>> = {}
  return {
    body,
    hash: contentHash(body),
    contentType,
    encoded(encoding) {
      if (body.length < MIN_COMPRESS_BYTES) return Promise.resolve(undefined)
      encoded[encoding] ??= compressAsync(body, encoding).then((compressed) => {
        // zlib's result is a view of its working buffers: copied, at its exact size, to where it is kept.
        const kept = allocate(compressed.length)
        compressed.copy(kept)
        return kept
      })
      return encoded[encoding]
    },
  }
}

/**
 * zlib returns its output as a view of its working buffer (16 KiB, or 8 KiB
 * for gzip): a single job compressed to ~850 bytes kept 16 KiB alive, ~19x
 * what the caches count, so the compressed-copies cache's 64 MB could hold
 * over 1 GB outside the JS heap. What a cache keeps is copied to its exact size.
 */
function exactCopy(bytes: Buffer): Buffer {
  if (bytes.buffer.byteLength === bytes.length) return bytes
  const copy = Buffer.allocUnsafeSlow(bytes.length)
  bytes.copy(copy)
  return copy
}

/**
 * Compressed copies of snapshot bodies (single jobs, v1 pages), keyed by
 * encoding and content hash, so a body is compressed once however often it
 * is asked for and whichever snapshot holds it. 64 MB holds the brotli and
 * gzip copies of ~40k single jobs.
 */
const storedEncodings = new LRUCache<string, Buffer>({
  maxSize: 64 << 20,
  sizeCalculation: (bytes) => Math.max(1, bytes.length),
})
/** Bytes held by the compressed copies of snapshot bodies (a /metrics gauge). */
export function storedEncodingsBytes(): number {
  return storedEncodings.calculatedSize
}

/** Bodies up to this size are compressed on the request's own thread: a 2 KB job takes ~30 us, less than a thread-pool round trip. */
const SYNC_COMPRESS_BYTES = 16 << 10

function compressSync(body: Buffer, encoding: Encoding): Buffer {
  return exactCopy(
    encoding === 'br'
      ? zlib.brotliCompressSync(body, {
          params: {
            [zlib.constants.BROTLI_PARAM_QUALITY]: COMPUTED_BROTLI_QUALITY,
            [zlib.constants.BROTLI_PARAM_SIZE_HINT]: body.length,
          },
        })
      : zlib.gzipSync(body, { level: COMPUTED_GZIP_LEVEL }),
  )
}

/**
 * A body sent once and not kept (an MCP answer): compressed at the fastest
 * level, on the request's thread when small, on the thread pool when large;
 * undefined when it is too small to gain.
 */
export async function compressOnce(body: Buffer, encoding: Encoding): Promise<Buffer | undefined> {
  if (body.length < MIN_COMPRESS_BYTES) return undefined
  return body.length <= SYNC_COMPRESS_BYTES ? compressSync(body, encoding) : compressAsync(body, encoding)
}

/** The same, on the thread pool (larger bodies), as zlib returns it (see exactCopy before keeping it). */
function compressAsync(body: Buffer, encoding: Encoding): Promise<Buffer> {
  return encoding === 'br' ? brotliAt(body) : gzip(body, { level: COMPUTED_GZIP_LEVEL })
}

/** A snapshot body identified by its content hash (the ETag); compressed copies are made on demand and shared. */
export function storedPayload(body: Buffer, hash: string, contentType?: string): Payload {
  return {
    body,
    hash,
    contentType,
    async encoded(encoding) {
      if (body.length < MIN_COMPRESS_BYTES) return undefined
      const key = `${encoding}|${hash}`
      let bytes = storedEncodings.get(key)
      if (bytes === undefined) {
        bytes =
          body.length <= SYNC_COMPRESS_BYTES
            ? compressSync(body, encoding)
            : exactCopy(await compressAsync(body, encoding))
        storedEncodings.set(key, bytes)
      }
      return bytes
    },
  }
}

const brotliAt = (body: Buffer) =>
  brotli(body, {
    params: {
      [zlib.constants.BROTLI_PARAM_QUALITY]: COMPUTED_BROTLI_QUALITY,
      [zlib.constants.BROTLI_PARAM_SIZE_HINT]: body.length,
    },
  })

export function filePayload(
  body: Buffer,
  hash: string,
  readEncoded: (encoding: Encoding) => Promise<Buffer | undefined>,
  contentType?: string,
): Payload {
  return { body, hash, contentType, encoded: readEncoded }
}
