/**
 * The two hashes a snapshot carries. Build and runtime must agree on them to
 * the byte: a server that hashed a body differently from the build would send
 * a different ETag for the same job than the one the build recorded, and
 * conditional requests would stop matching after a restart.
 */
import { createHash } from 'node:crypto'

/**
 * A public body's identity: SHA-256, base64url, first 22 characters (132
 * bits, plenty against accidental collisions). It is the ETag (quoted, with
 * `-br`/`-gz` for compressed copies) and the manifest's change detector.
 */
export function contentHash(body: Buffer | string): string {
  return createHash('sha256').update(body).digest('base64url').slice(0, CONTENT_HASH_LENGTH)
}

/** Characters of the base64url SHA-256 contentHash keeps (for code that hashes the same way off this thread). */
export const CONTENT_HASH_LENGTH = 22

/**
 * An index file's full SHA-256 (base64url), recorded in the manifest and checked on load instead of
 * re-validating; of a file given in parts, that of the parts one after the other.
 */
export function indexFileHash(body: Buffer | string | readonly Buffer[]): string {
  const digest = createHash('sha256')
  if (typeof body === 'string' || Buffer.isBuffer(body)) return digest.update(body).digest('base64url')
  for (const part of body) digest.update(part)
  return digest.digest('base64url')
}
