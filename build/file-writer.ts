/**
 * Writes the snapshot's public files: the exact response bytes, plus brotli
 * and gzip copies so neither nginx nor the runtime compresses per request.
 * Compression and writing run on worker threads (CompressPool), a bounded
 * number of files at a time.
 */
import { createHash } from 'node:crypto'
import { link, mkdir, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { CompressPool } from './compress-pool.ts'

/** Short content hash: the ETag of a public file and the manifest's change detector. */
export function contentHash(bytes: Buffer | string): string {
  return createHash('sha256').update(bytes).digest('base64url').slice(0, 22)
}

/** The published snapshot a build can reuse unchanged files from. */
export interface PreviousSnapshot {
  dir: string
  hashes: Record<string, string>
}

export class SnapshotFileWriter {
  /** Relative path -> content hash, for the manifest. */
  readonly hashes: Record<string, string> = {}
  /** Public files written anew (not linked from the previous snapshot). */
  rewritten = 0
  reused = 0
  private readonly pending = new Set<Promise<void>>()
  private readonly madeDirs = new Set<string>()
  private pool: CompressPool | undefined

  constructor(
    private readonly root: string,
    private readonly previous?: PreviousSnapshot,
    private readonly concurrency = 256,
  ) {}

  /** Queues a public file (and its compressed copies); resolves when there is room for more. */
  async writePublic(relativePath: string, body: string): Promise<string> {
    const bytes = Buffer.from(body)
    const hash = contentHash(bytes)
    this.hashes[relativePath] = hash
    const unchanged = this.previous?.hashes[relativePath] === hash
    const task = (unchanged ? this.linkFromPrevious(relativePath).catch(() => this.replaceLinks(relativePath, bytes)) : this.writeWithEncodings(relativePath, bytes)).finally(() =>
      this.pending.delete(task),
    )
    this.pending.add(task)
    if (this.pending.size >= this.concurrency) await Promise.race(this.pending)
    return hash
  }

  /** Writes a private file (index, manifest) uncompressed. */
  async writePrivate(relativePath: string, body: string | Buffer): Promise<void> {
    const full = path.join(this.root, relativePath)
    await this.ensureDir(path.dirname(full))
    await writeFile(full, body)
  }

  async flush(): Promise<void> {
    await Promise.all(this.pending)
  }

  /** Stops the worker threads (after a failure too: call it in a finally). */
  async close(): Promise<void> {
    await Promise.allSettled(this.pending)
    await this.pool?.close()
    this.pool = undefined
  }

  /**
   * An unchanged file is hard-linked from the previous snapshot: no
   * compression, no copy, and each snapshot folder still stands alone (pruning
   * the old one leaves the link intact).
   */
  private async linkFromPrevious(relativePath: string): Promise<void> {
    const full = path.join(this.root, relativePath)
    const old = path.join(this.previous!.dir, relativePath)
    await this.ensureDir(path.dirname(full))
    await Promise.all(['', '.br', '.gz'].map((suffix) => link(old + suffix, full + suffix)))
    this.reused++
  }

  /** After a failed link: drop whatever links were made (writing through one would change the old snapshot), then write. */
  private async replaceLinks(relativePath: string, bytes: Buffer): Promise<void> {
    const full = path.join(this.root, relativePath)
    await Promise.all(['', '.br', '.gz'].map((suffix) => rm(full + suffix, { force: true })))
    await this.writeWithEncodings(relativePath, bytes)
  }

  private async writeWithEncodings(relativePath: string, bytes: Buffer): Promise<void> {
    this.rewritten++
    const full = path.join(this.root, relativePath)
    await this.ensureDir(path.dirname(full))
    this.pool ??= new CompressPool()
    await this.pool.write(full, bytes)
  }

  private async ensureDir(dir: string): Promise<void> {
    if (this.madeDirs.has(dir)) return
    await mkdir(dir, { recursive: true })
    this.madeDirs.add(dir)
  }
}
