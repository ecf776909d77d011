/**
 * Writes the snapshot's public files: the exact response bytes; a file
 * unchanged since the previous snapshot is hard-linked from it. Both happen
 * on worker threads (CompressPool), in batches, a bounded number of files in
 * flight.
 *
 * Only files asked for with `precompress` (the OpenAPI document) get brotli
 * and gzip siblings. A job file or a v1 page is compressed by whoever serves
 * it, on demand (the runtime at its fastest levels, then cached; nginx with
 * `gzip on`): precompressing every one of them tripled the files a snapshot
 * holds and cost more than half of a build's CPU time (three files per job
 * at 1M jobs is 3M files to create, and to link again on every rebuild).
 */
import { contentHash } from '../core/content-hash.ts'
import { JOB_WHITEOUTS } from '../core/job-layers.ts'
import { readFileSync } from 'node:fs'
import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { CompressPool, type PublicFile } from './compress-pool.ts'
import type { JobFileList } from './job-files.ts'

/** The published snapshot a build can reuse unchanged files from. */
export interface PreviousSnapshot {
  /** The published snapshot's id. */
  id: string
  dir: string
  /** Its public files' hashes but for the job files, which `jobFiles` lists. */
  hashes: ReadonlyMap<string, string>
  jobFiles: JobFileList
  /** The manifest's index file hashes (empty for a snapshot made before they were recorded). */
  indexHashes: Record<string, string>
  /** What frames its v1 pages: the live job count and the site named in the usage notice. */
  liveJobs?: number
  siteUrl?: string
  /**
   * Set when its job files are a delta over a base's full layer (core/job-layers.ts): the base's folder,
   * the job files it holds itself (relative paths), its whiteouts (slugs), and what the base holds under
   * those (slug -> content hash, JOB_BASE_HASHES; undefined for a delta made before that was recorded).
   */
  jobDelta?: {
    baseId: string
    baseDir: string
    own: ReadonlySet<string>
    gone: ReadonlySet<string>
    baseHashes?: ReadonlyMap<string, string>
  }
}

/** A job file of the new snapshot that its base layer holds already: nothing to put on disk. */
const IN_BASE = Symbol('in base')
/** The per-job files' folder, as snapshotPaths.v2Job names them. */
const JOB_FILES = 'v2/jobs/'

/** A job file's slug, from its relative path. */
const slugOf = (relativePath: string): string => relativePath.slice(JOB_FILES.length, -'.json'.length)

/** Files per message to a worker: amortises the message, small enough to keep both workers busy. */
const BATCH_SIZE = 64
/** Link-only files per message: each is a line of one string, so a message can carry many. */
const LINK_BATCH_SIZE = 1024
const EMPTY = Buffer.alloc(0)

export class SnapshotFileWriter {
  /**
   * Relative path -> content hash, for the manifest: every public file but the job files, which the
   * build lists in date order itself (job-files.ts).
   */
  readonly hashes = new Map<string, string>()
  /** Public files written anew (not linked from the previous snapshot). */
  rewritten = 0
  reused = 0
  /** Job files left in the base layer (a delta's jobs unchanged since its base): neither written nor linked. */
  inBase = 0
  /** Whiteouts written (jobs the base layer has and this snapshot does not). */
  whiteouts = 0
  /** With useJobBase: the job files put in this snapshot's own folder (written or linked), relative paths. */
  readonly ownJobFiles: string[] = []
  /**
   * With useJobBase: slug -> the content hash of the base's file, for each job file put in this snapshot's
   * own folder or whited out that the base has a file for (written as JOB_BASE_HASHES).
   */
  readonly jobBaseHashes = new Map<string, string>()
  /**
   * Files queued with `linkOnly` whose previous copy could not be linked (it
   * was deleted from the previous snapshot): the caller writes them again.
   */
  readonly failedLinks: string[] = []
  private readonly pending = new Set<Promise<void>>()
  /** Files sent to the workers and not yet on disk. */
  private inFlight = 0
  private batch: PublicFile[] = []
  /** Relative path of each file of `batch` hashed on the worker (by its place in the batch), where its hash goes. */
  private batchHashed: (string | undefined)[] = []
  /** Relative paths waiting to be hard-linked, by the folder they are linked from. */
  private readonly links = new Map<string, string[]>()
  /**
   * Set (useJobBase) when this snapshot's job files are a delta over the previous snapshot's base
   * layer, or over the previous snapshot itself when that is a full layer.
   */
  private jobDelta = false
  /** With a delta over a delta: 1 at each position of the previous list whose file that delta holds itself. */
  private previousOwnJobs: Uint8Array | undefined
  private readonly madeDirs = new Set<string>()
  private pool: CompressPool | undefined

  constructor(
    private readonly root: string,
    private readonly previous?: PreviousSnapshot,
    private readonly concurrency = 4096,
  ) {}

  /**
   * Queues a public file (and its compressed copies when `precompress`); resolves, with its
   * content hash, when there is room for more. `hash` saves hashing bytes whose hash is known.
   * `linkOnly`: when the file is unchanged, its bytes are not even sent to the worker that links
   * it (at 1M jobs, copying them was most of the cost of an incremental build's writes); a
   * link that fails lands in `failedLinks` instead of being written. `borrowed`: the bytes are
   * only lent (a reused buffer), so they are copied if they must be kept.
   */
  async writePublic(
    relativePath: string,
    body: string | Buffer,
    options: { hash?: string; precompress?: boolean; linkOnly?: boolean; borrowed?: boolean } = {},
  ): Promise<string> {
    const bytes = typeof body === 'string' ? Buffer.from(body) : body
    const hash = options.hash ?? contentHash(bytes)
    if (!relativePath.startsWith(JOB_FILES)) this.hashes.set(relativePath, hash)
    await this.ensureDir(relativePath.slice(0, Math.max(0, relativePath.lastIndexOf('/'))))
    // An unchanged file is hard-linked: no compression, no copy, and each snapshot folder still
    // stands alone (pruning the old one leaves the link intact), but for a delta's job files (see useJobBase).
    const from = this.sourceOf(relativePath, hash) ?? this.revertedToBase(relativePath, hash)
    if (from !== IN_BASE && this.jobDelta && relativePath.startsWith(JOB_FILES)) this.addOwnJobFile(relativePath)
    if (from === IN_BASE) this.inBase++
    else if (from !== undefined && options.linkOnly === true) this.queueLink(from, relativePath)
    else {
      const full = path.join(this.root, relativePath)
      this.batch.push({
        path: full,
        bytes: options.borrowed ? Buffer.from(bytes) : bytes,
        precompress: options.precompress === true,
        ...(from !== undefined ? { linkFrom: path.join(from, relativePath) } : {}),
      })
      if (this.batch.length >= BATCH_SIZE) this.dispatch()
    }
    await this.room()
    return hash
  }

  /**
   * A public file given as parts (joined on the worker, never on this thread) and hashed on the
   * worker: linked when its hash is the previous snapshot's, else written. Its place in the
   * manifest's file map is taken now (the order files were queued in), its hash filled in when
   * the worker is done (by flush). For files whose bytes are large and mostly changed: the v1
   * pages of a build where jobs changed, whose hashing was a large share of this thread's time.
   * The parts are kept until then: the caller must not reuse them.
   */
  async writePublicHashedOnWorker(relativePath: string, parts: readonly Buffer[]): Promise<void> {
    this.hashes.set(relativePath, '')
    await this.ensureDir(relativePath.slice(0, Math.max(0, relativePath.lastIndexOf('/'))))
    const previous = this.previous?.hashes.get(relativePath)
    this.batchHashed[this.batch.length] = relativePath
    this.batch.push({
      path: path.join(this.root, relativePath),
      bytes: parts,
      precompress: false,
      hashOnWorker: { ...(previous !== undefined ? { previous } : {}) },
      ...(previous !== undefined ? { linkFrom: path.join(this.previous!.dir, relativePath) } : {}),
    })
    if (this.batch.length >= BATCH_SIZE) this.dispatch()
    await this.room()
  }

  /**
   * writePublic's path for a file that is most likely unchanged, without its promise and its
   * waits (an incremental build passes here once per job): when the previous snapshot has the
   * same hash, queues the link (as `linkOnly`) and returns true; else false, and the caller
   * writes the file with writePublic. The caller waits for `room()` while `saturated`, and passes
   * the previous snapshot's hash of the path when it has it (found by position: no lookup here).
   */
  linkIfUnchanged(relativePath: string, hash: string, previousHash?: string): boolean {
    const from = this.sourceOf(relativePath, hash, previousHash)
    if (from === undefined) return false
    const jobFile = relativePath.startsWith(JOB_FILES)
    if (from === IN_BASE) {
      this.inBase++
      return true
    }
    if (!this.madeDirs.has(relativePath.slice(0, Math.max(0, relativePath.lastIndexOf('/'))))) return false
    if (!jobFile) this.hashes.set(relativePath, hash)
    if (this.jobDelta && relativePath.startsWith(JOB_FILES)) this.addOwnJobFile(relativePath)
    this.queueLink(from, relativePath)
    return true
  }

  /**
   * For the job file at `position` of the previous snapshot's list, republished unchanged: true (and
   * counted among inBase) when it stays in the base layer, nothing to link; false when it must be
   * linked (linkIfUnchanged with its path), as every unchanged job file of a full layer is.
   */
  keepsJobInBase(position: number): boolean {
    if (!this.jobDelta || this.previousOwnJobs?.[position] === 1) return false
    this.inBase++
    return true
  }

  /**
   * Makes this snapshot's job files a delta (core/job-layers.ts) over the full layer the previous
   * snapshot's are (its base's, or its own): a job file unchanged since the previous snapshot and held
   * by that layer is left there, one the previous delta holds is linked from it, any other is written.
   * Called before the first job file; the caller makes the `v2/base` link and the whiteouts.
   */
  useJobBase(): void {
    const previous = this.previous
    if (previous === undefined) throw new Error('a delta of job files needs a previous snapshot')
    this.jobDelta = true
    // Which of the previous list's job files its delta holds itself: looked up by position for each job kept.
    const own = previous.jobDelta?.own
    if (own === undefined || own.size === 0) return
    this.previousOwnJobs = new Uint8Array(previous.jobFiles.size)
    for (const relativePath of own) {
      const position = previous.jobFiles.positionOf(slugOf(relativePath))
      if (position !== undefined) this.previousOwnJobs[position] = 1
    }
  }

  /** Writes an empty whiteout file, `v2/gone/<slug>`, for each of `slugs` (not in the manifest's file map). */
  async writeWhiteouts(slugs: Iterable<string>): Promise<void> {
    await this.ensureDir(JOB_WHITEOUTS)
    for (const slug of slugs) {
      this.recordBaseHash(slug)
      this.batch.push({ path: path.join(this.root, JOB_WHITEOUTS, slug), bytes: EMPTY, precompress: false })
      this.whiteouts++
      if (this.batch.length >= BATCH_SIZE * 16) this.dispatch()
      await this.room()
    }
  }

  /**
   * Where an identical copy of a public file already is: IN_BASE (a job file the base layer of this
   * snapshot's delta holds), the folder to hard-link it from, or undefined (it is written).
   */
  private sourceOf(
    relativePath: string,
    hash: string,
    previousHash = this.previousHashOf(relativePath),
  ): string | typeof IN_BASE | undefined {
    const previous = this.previous
    if (previous === undefined || previousHash !== hash) return undefined
    if (!relativePath.startsWith(JOB_FILES)) return previous.dir
    const delta = previous.jobDelta
    // Unchanged since the previous snapshot: where the previous snapshot has it, the base layer or its own.
    const ownCopy = delta === undefined || delta.own.has(relativePath)
    if (this.jobDelta) return ownCopy && delta !== undefined ? previous.dir : IN_BASE
    return ownCopy ? previous.dir : delta.baseDir
  }

  /**
   * IN_BASE when a job file the previous delta held (changed since the base) or had a whiteout for (gone) is
   * back to the base's bytes (a change undone, a job back): its hash is the base's.
   */
  private revertedToBase(relativePath: string, hash: string): typeof IN_BASE | undefined {
    const delta = this.previous?.jobDelta
    if (!this.jobDelta || delta === undefined) return undefined
    if (!delta.own.has(relativePath) && !delta.gone.has(slugOf(relativePath))) return undefined
    return this.baseHashOf(relativePath) === hash ? IN_BASE : undefined
  }

  /**
   * The content hash of the file the base layer holds for a job file (undefined: it holds none). Where the
   * previous snapshot shows the base's file, its hash is the manifest's; under the previous delta's own files
   * and whiteouts, it is what that delta recorded, or, for a delta made before those were recorded, the hash of
   * the base's file, read (once per such file, on the first build after an upgrade).
   */
  private baseHashOf(relativePath: string): string | undefined {
    const previous = this.previous!
    const delta = previous.jobDelta
    const slug = slugOf(relativePath)
    if (delta === undefined || (!delta.own.has(relativePath) && !delta.gone.has(slug)))
      return this.previousHashOf(relativePath)
    if (delta.baseHashes !== undefined) return delta.baseHashes.get(slug)
    try {
      return contentHash(readFileSync(path.join(delta.baseDir, relativePath)))
    } catch {
      return undefined
    }
  }

  /** The previous snapshot's hash of a public file (job files from its list). */
  private previousHashOf(relativePath: string): string | undefined {
    const previous = this.previous
    if (previous === undefined) return undefined
    return relativePath.startsWith(JOB_FILES)
      ? previous.jobFiles.hashOf(relativePath)
      : previous.hashes.get(relativePath)
  }

  private addOwnJobFile(relativePath: string): void {
    this.ownJobFiles.push(relativePath)
    this.recordBaseHash(slugOf(relativePath))
  }

  private recordBaseHash(slug: string): void {
    const hash = this.baseHashOf(`${JOB_FILES}${slug}.json`)
    if (hash !== undefined) this.jobBaseHashes.set(slug, hash)
  }

  private queueLink(from: string, relativePath: string): void {
    let paths = this.links.get(from)
    if (paths === undefined) {
      paths = []
      this.links.set(from, paths)
    }
    paths.push(relativePath)
    if (paths.length >= LINK_BATCH_SIZE) this.dispatchLinks(from)
  }

  /**
   * A public file the caller knows to be the previous snapshot's, byte for byte, without having
   * made its bytes: hard-linked with its previous hash (as `linkOnly`: a failed link lands in
   * `failedLinks`, and the caller makes and writes it then).
   */
  async linkPublic(relativePath: string, hash: string): Promise<void> {
    await this.ensureDir(relativePath.slice(0, Math.max(0, relativePath.lastIndexOf('/'))))
    if (!this.linkIfUnchanged(relativePath, hash)) throw new Error(`${relativePath}: not in the previous snapshot`)
    await this.room()
  }

  /** True while as many files as allowed are in flight: wait for room() before queueing more. */
  get saturated(): boolean {
    return this.inFlight >= this.concurrency
  }

  async room(): Promise<void> {
    while (this.inFlight >= this.concurrency) await Promise.race(this.pending)
  }

  /** Writes a private file (index, manifest) uncompressed; given in parts, they are written one after the other. */
  async writePrivate(relativePath: string, body: string | Buffer | readonly Buffer[]): Promise<void> {
    await this.ensureDir(path.dirname(relativePath).replace(/^\.$/, ''))
    await writeFile(path.join(this.root, relativePath), body)
  }

  async flush(): Promise<void> {
    this.dispatch()
    for (const from of this.links.keys()) this.dispatchLinks(from)
    await Promise.all(this.pending)
  }

  /** Gzips slices of `bytes` as separate gzip members on the same worker threads (see CompressPool.gzipMembers). */
  gzipMembers(bytes: Uint8Array, ends: number[], level: number): Promise<Buffer[]> {
    return this.workers().gzipMembers(bytes, ends, level)
  }

  /** Stops the worker threads (after a failure too: call it in a finally). */
  async close(): Promise<void> {
    await Promise.allSettled(this.pending)
    await this.pool?.close()
    this.pool = undefined
  }

  private dispatch(): void {
    if (this.batch.length === 0) return
    const files = this.batch
    const hashed = this.batchHashed
    this.batch = []
    this.batchHashed = []
    this.track(
      files.length,
      this.workers()
        .write(files)
        .then(({ outcomes, hashes }) => {
          for (const outcome of outcomes) {
            if (outcome === 'linked') this.reused++
            else this.rewritten++
          }
          hashed.forEach((relativePath, i) => {
            if (relativePath !== undefined) this.hashes.set(relativePath, hashes[i]!)
          })
        }),
    )
  }

  private dispatchLinks(from: string): void {
    const paths = this.links.get(from)
    if (paths === undefined || paths.length === 0) return
    this.links.set(from, [])
    this.track(
      paths.length,
      this.workers()
        .link(`${from}/`, `${this.root}/`, paths)
        .then((failed) => {
          this.reused += paths.length - failed.length
          this.failedLinks.push(...failed)
        }),
    )
  }

  private workers(): CompressPool {
    this.pool ??= new CompressPool()
    return this.pool
  }

  /** Counts `files` in flight until `task` settles. */
  private track(files: number, task: Promise<void>): void {
    this.inFlight += files
    const settled = task.finally(() => {
      this.inFlight -= files
      this.pending.delete(settled)
    })
    // Handled here so a failure between two awaits is not an unhandled rejection; flush and writePublic still see it.
    settled.catch(() => undefined)
    this.pending.add(settled)
  }

  /** Makes a folder under the root (relative; '' is the root) once per build. */
  private async ensureDir(relativeDir: string): Promise<void> {
    if (this.madeDirs.has(relativeDir)) return
    await mkdir(path.join(this.root, relativeDir), { recursive: true })
    this.madeDirs.add(relativeDir)
  }
}
