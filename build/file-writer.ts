/**
 * Writes the snapshot's public files: the exact response bytes, plus brotli
 * and gzip copies so neither nginx nor the runtime compresses per request.
 * Compression runs on libuv's thread pool, a bounded number at a time.
 */
import { createHash } from 'node:crypto'
import { link, mkdir, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { promisify } from 'node:util'
import zlib from 'node:zlib'

const brotli = promisify(zlib.brotliCompress)
const gzip = promisify(zlib.gzip)

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

  constructor(
    private readonly root: string,
    private readonly previous?: PreviousSnapshot,
    private readonly concurrency = 32,
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
    const [br, gz] = await Promise.all([
      brotli(bytes, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 6, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: bytes.length } }),
      gzip(bytes, { level: 9 }),
    ])
    await Promise.all([writeFile(full, bytes), writeFile(`${full}.br`, br), writeFile(`${full}.gz`, gz)])
  }

  private async ensureDir(dir: string): Promise<void> {
    if (this.madeDirs.has(dir)) return
    await mkdir(dir, { recursive: true })
    this.madeDirs.add(dir)
  }
}
