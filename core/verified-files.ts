/**
 * A snapshot's record of which index files were checked against the hashes
 * in its manifest, and as what file: `index/verified.json`, per file the
 * hash it was found to have and the file's identity then (device, inode,
 * size, modification and change times in nanoseconds). A server that finds
 * a file with the same identity and the manifest's hash trusts it without
 * reading it again: at 1M jobs re-hashing the 1.6 GB of v2 bodies was
 * seconds of every worker's start and pulled the whole file into the page
 * cache. Any write to a file (even one that puts its modification time back)
 * changes its change time, and a copy is another inode: then the record does
 * not match and the file is hashed in full, and refused if it differs.
 *
 * The build writes it as it publishes (for the bytes it hashed as it wrote
 * them), a server after each full check it made (when it may write there).
 * A record that is missing, unreadable or does not match costs a full check,
 * never a refusal.
 */
import type { BigIntStats } from 'node:fs'
import { readFile, rename, rm, stat, writeFile } from 'node:fs/promises'
import path from 'node:path'

/** Where the record lives inside a snapshot folder. */
export const VERIFIED_FILES = 'index/verified.json'

/** Snapshot-relative path -> what it was verified as. */
export type VerifiedFiles = Record<string, { hash: string; identity: string }>

/** A file's identity: what any write, copy or replacement changes. From `stat(..., { bigint: true })`. */
export function fileIdentity(stats: BigIntStats): string {
  return `${stats.dev}:${stats.ino}:${stats.size}:${stats.mtimeNs}:${stats.ctimeNs}`
}

/** The snapshot's record; empty when there is none or it cannot be read. */
export async function readVerifiedFiles(snapshotDir: string): Promise<VerifiedFiles> {
  try {
    const parsed = JSON.parse(await readFile(path.join(snapshotDir, VERIFIED_FILES), 'utf8')) as unknown
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return {}
    const out: VerifiedFiles = {}
    for (const [file, entry] of Object.entries(parsed as Record<string, unknown>)) {
      const { hash, identity } = (entry ?? {}) as { hash?: unknown; identity?: unknown }
      if (typeof hash === 'string' && typeof identity === 'string') out[file] = { hash, identity }
    }
    return out
  } catch {
    return {}
  }
}

/** Whether the record vouches for a file with this identity having `expectedHash`. */
export function isVerified(
  record: VerifiedFiles,
  file: string,
  expectedHash: string,
  stats: BigIntStats | undefined,
): boolean {
  const entry = record[file]
  return stats !== undefined && entry?.hash === expectedHash && entry.identity === fileIdentity(stats)
}

/**
 * Adds entries to the record (written whole to a temporary file, then
 * renamed over it, so a reader never sees half of one). Returns false when
 * it cannot be written (a read-only dist, say): the next load checks in full.
 */
export async function recordVerifiedFiles(snapshotDir: string, entries: VerifiedFiles): Promise<boolean> {
  if (Object.keys(entries).length === 0) return true
  const target = path.join(snapshotDir, VERIFIED_FILES)
  const temporary = `${target}.${process.pid}.tmp`
  try {
    const merged = { ...(await readVerifiedFiles(snapshotDir)), ...entries }
    await writeFile(temporary, `${JSON.stringify(merged, null, 1)}\n`)
    await rename(temporary, target)
    return true
  } catch {
    await rm(temporary, { force: true }).catch(() => {})
    return false
  }
}

/** Each file's identity now, with the hash the caller vouches for; a file that is missing is left out. */
export async function identitiesOf(snapshotDir: string, hashes: Record<string, string>): Promise<VerifiedFiles> {
  const out: VerifiedFiles = {}
  for (const [file, hash] of Object.entries(hashes)) {
    const stats = await stat(path.join(snapshotDir, file), { bigint: true }).catch(() => undefined)
    if (stats) out[file] = { hash, identity: fileIdentity(stats) }
  }
  return out
}
