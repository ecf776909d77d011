/**
 * Writes the snapshot's public files: the exact response bytes, plus brotli
 * and gzip copies so neither nginx nor the runtime compresses per request.
 * Compression runs on libuv's thread pool, a bounded number at a time.
 */
import { createHash } from 'node:crypto'
import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { promisify } from 'node:util'
import zlib from 'node:zlib'

const brotli = promisify(zlib.brotliCompress)
const gzip = promisify(zlib.gzip)

/** Short content hash: the ETag of a public file and the manifest's change detector. */
export function contentHash(bytes: Buffer | string): string {
  return createHash('sha256').update(bytes).digest('base64url').slice(0, 22)
}

export class SnapshotFileWriter {
  /** Relative path -> content hash, for the manifest. */
  readonly hashes: Record<string, string> = {}
  private readonly pending = new Set<Promise<void>>()
  private readonly madeDirs = new Set<string>()

  constructor(
    private readonly root: string,
    private readonly concurrency = 32,
  ) {}

  /** Queues a public file (and its compressed copies); resolves when there is room for more. */
  async writePublic(relativePath: string, body: string): Promise<string> {
    const bytes = Buffer.from(body)
    const hash = contentHash(bytes)
    this.hashes[relativePath] = hash
    const task = this.writeWithEncodings(relativePath, bytes).finally(() => this.pending.delete(task))
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

  private async writeWithEncodings(relativePath: string, bytes: Buffer): Promise<void> {
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
