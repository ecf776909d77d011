/**
 * A snapshot's job files (v2/jobs/<slug>.json, one per live job, in date
 * order) as its index/job-files.txt lists them: `<slug>\t<hash>\n` lines.
 *
 * The build keeps them as those lines rather than in its map of public
 * files. At 1M jobs that map held a million paths: built from the previous
 * snapshot's list, filled again job by job for the new one, then walked to
 * split the list back out and to diff the two, all on the build's own
 * thread, and every collection marked its two million strings. Here a job
 * republished unchanged is the previous list's line, copied as bytes with
 * its neighbours; only the jobs that changed are looked up by slug.
 */
import { indexFileHash } from '../core/content-hash.ts'
import { snapshotPaths } from '../core/snapshot.ts'

const NEWLINE = 0x0a
const TAB = 0x09

/** What a job file's path is around its slug. */
const JOB_PATH_HEAD = snapshotPaths.v2Job('').slice(0, snapshotPaths.v2Job('').lastIndexOf('/') + 1)
const JOB_PATH_TAIL = snapshotPaths.v2Job('').slice(JOB_PATH_HEAD.length)

/** FNV-1a of a string's character codes: of its bytes, for the one-byte characters a slug is made of. */
function hashOfText(text: string): number {
  let hash = 0x811c9dc5
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193)
  return hash >>> 0
}

/** FNV-1a of bytes [start, end): hashOfText of the same characters. */
function hashOfBytes(bytes: Uint8Array, start: number, end: number): number {
  let hash = 0x811c9dc5
  for (let i = start; i < end; i++) hash = Math.imul(hash ^ bytes[i]!, 0x01000193)
  return hash >>> 0
}

/** The slug of a job file's path (`v2/jobs/<slug>.json`), or undefined for any other path. */
export function jobFileSlug(relativePath: string): string | undefined {
  return relativePath.startsWith(JOB_PATH_HEAD) && relativePath.endsWith(JOB_PATH_TAIL)
    ? relativePath.slice(JOB_PATH_HEAD.length, relativePath.length - JOB_PATH_TAIL.length)
    : undefined
}

/** A published snapshot's job files, read from its list. */
export class JobFileList {
  /** Lookups by slug (positionOf), made on the first one. */
  private slots: Int32Array | undefined

  private constructor(
    private readonly bytes: Buffer,
    /** lineStarts[q] is where line q starts; lineStarts[size] is one past the last line's newline. */
    private readonly lineStarts: Uint32Array,
    /** Where line q's tab is. */
    private readonly tabs: Uint32Array,
  ) {}

  /**
   * The list in `bytes` (index/job-files.txt), when its hash and line count are the ones the manifest
   * recorded (`listed`) and every line is `<slug>\t<hash>`; else undefined.
   */
  static read(bytes: Buffer, listed?: { count: number; sha256: string }): JobFileList | undefined {
    if (listed !== undefined && indexFileHash(bytes) !== listed.sha256) return undefined
    let count = 0
    for (let at = bytes.indexOf(NEWLINE); at >= 0; at = bytes.indexOf(NEWLINE, at + 1)) count++
    if (listed !== undefined && count !== listed.count) return undefined
    const lineStarts = new Uint32Array(count + 1)
    const tabs = new Uint32Array(count)
    let start = 0
    for (let q = 0; q < count; q++) {
      const end = bytes.indexOf(NEWLINE, start)
      const tab = bytes.indexOf(TAB, start)
      if (tab <= start || tab > end - 2) return undefined
      tabs[q] = tab
      start = end + 1
      lineStarts[q + 1] = start
    }
    if (start !== bytes.length) return undefined
    return new JobFileList(bytes, lineStarts, tabs)
  }

  /** A list of `[slug, hash]` pairs (a snapshot of a format that listed its job files in the manifest). */
  static of(entries: Iterable<readonly [string, string]>): JobFileList {
    let text = ''
    for (const [slug, hash] of entries) text += `${slug}\t${hash}\n`
    return JobFileList.read(Buffer.from(text, 'latin1'))!
  }

  get size(): number {
    return this.tabs.length
  }

  slugAt(position: number): string {
    return this.bytes.toString('latin1', this.lineStarts[position]!, this.tabs[position]!)
  }

  hashAt(position: number): string {
    return this.bytes.toString('latin1', this.tabs[position]! + 1, this.lineStarts[position + 1]! - 1)
  }

  pathAt(position: number): string {
    return snapshotPaths.v2Job(this.slugAt(position))
  }

  /** Whether the hash at `position` is bytes [start, end) of `text` (compared without making a string). */
  hashIs(position: number, text: Uint8Array, start: number, end: number): boolean {
    const from = this.tabs[position]! + 1
    const length = this.lineStarts[position + 1]! - 1 - from
    if (end - start !== length) return false
    for (let i = 0; i < length; i++) if (this.bytes[from + i] !== text[start + i]) return false
    return true
  }

  /**
   * Where the list has `slug`, or undefined. Looked up in a table of line positions keyed by a hash
   * of each slug's bytes, made on the first lookup, with no string per line: a map of a million slugs
   * took ~0.7 s of a 1M build's own thread.
   */
  positionOf(slug: string): number | undefined {
    const slots = this.slotsOf()
    const mask = slots.length - 1
    for (let slot = hashOfText(slug) & mask; slots[slot] !== 0; slot = (slot + 1) & mask) {
      const position = slots[slot]! - 1
      if (this.slugIs(position, slug)) return position
    }
    return undefined
  }

  /** Open addressing, linear probing, at most half full: a line's position + 1 at its slug's slot, 0 for none. */
  private slotsOf(): Int32Array {
    if (this.slots !== undefined) return this.slots
    let capacity = 1024
    while (capacity < this.size * 2) capacity *= 2
    const slots = new Int32Array(capacity)
    const mask = capacity - 1
    for (let q = 0; q < this.size; q++) {
      let slot = hashOfBytes(this.bytes, this.lineStarts[q]!, this.tabs[q]!) & mask
      while (slots[slot] !== 0) slot = (slot + 1) & mask
      slots[slot] = q + 1
    }
    this.slots = slots
    return slots
  }

  private slugIs(position: number, slug: string): boolean {
    const start = this.lineStarts[position]!
    if (this.tabs[position]! - start !== slug.length) return false
    for (let i = 0; i < slug.length; i++) if (this.bytes[start + i] !== slug.charCodeAt(i)) return false
    return true
  }

  /** The hash of the job file at `relativePath`, or undefined when the list has none there. */
  hashOf(relativePath: string): string | undefined {
    const slug = jobFileSlug(relativePath)
    const position = slug === undefined ? undefined : this.positionOf(slug)
    return position === undefined ? undefined : this.hashAt(position)
  }

  /** Lines `from`..`to - 1`, as bytes (a view). */
  lines(from: number, to: number): Buffer {
    return this.bytes.subarray(this.lineStarts[from]!, this.lineStarts[to]!)
  }

  *entries(): Generator<[slug: string, hash: string]> {
    for (let q = 0; q < this.size; q++) yield [this.slugAt(q), this.hashAt(q)]
  }
}

/** What changed between two snapshots' job files, by path, with each changed slug's hashes before and after. */
export interface JobFileChanges {
  added: string[]
  changed: string[]
  removed: string[]
  hashes: Record<string, [before: string | null, after: string | null]>
}

/** A job listed other than as the previous list's line: its slug, hash and where the previous list has its slug (-1: nowhere). */
interface ListedJob {
  slug: string
  hash: string
  previousPosition: number
}

/** The new snapshot's list, job by job in date order. */
export class JobFileListBuilder {
  private readonly parts: Buffer[] = []
  /** The run of the previous list's lines being kept, [runFrom, runTo). */
  private runFrom = 0
  private runTo = 0
  private pending = ''
  private count = 0
  /** For each job kept as the previous list's line: that line's position. */
  private readonly kept: Int32Array
  private readonly others: ListedJob[] = []
  private readonly otherSlugs = new Set<string>()

  constructor(
    private readonly previous: JobFileList | undefined,
    jobs: number,
  ) {
    this.kept = new Int32Array(jobs).fill(-1)
  }

  get size(): number {
    return this.count
  }

  /** The next job's file is the previous list's at `position`, byte for byte (same slug, same hash). */
  keep(position: number): void {
    if (position !== this.runTo || this.runFrom === this.runTo) {
      this.flushRun()
      this.runFrom = position
    }
    this.runTo = position + 1
    this.kept[this.count++] = position
  }

  /**
   * The next job's file, `slug` with `hash`; `hint`: where the previous list may have its slug (checked).
   * Returns the hash the previous list has for that slug (undefined: it has none).
   */
  add(slug: string, hash: string, hint?: number): string | undefined {
    const previous = this.previous
    const previousPosition =
      previous === undefined
        ? undefined
        : hint !== undefined && hint < previous.size && previous.slugAt(hint) === slug
          ? hint
          : previous.positionOf(slug)
    this.flushRun()
    this.pending += `${slug}\t${hash}\n`
    if (this.pending.length >= 1 << 16) this.flushPending()
    this.others.push({ slug, hash, previousPosition: previousPosition ?? -1 })
    this.otherSlugs.add(slug)
    this.count++
    return previousPosition === undefined ? undefined : previous!.hashAt(previousPosition)
  }

  /** Whether the list has `slug` among the jobs added (not kept): a slug the previous list lacks is one of those. */
  addedSlug(slug: string): boolean {
    return this.otherSlugs.has(slug)
  }

  /** The list's bytes, in parts (index/job-files.txt). */
  finish(): Buffer[] {
    this.flushRun()
    this.flushPending()
    return this.parts
  }

  /** The file pairs of the list, slug then hash (what a caller outside the build compares). */
  *entries(): Generator<[slug: string, hash: string]> {
    let other = 0
    for (let position = 0; position < this.count; position++) {
      const kept = this.kept[position]!
      if (kept >= 0) yield [this.previous!.slugAt(kept), this.previous!.hashAt(kept)]
      else {
        const job = this.others[other++]!
        yield [job.slug, job.hash]
      }
    }
  }

  /** Job files added, changed and removed since the previous list (all added when there was none). */
  changes(): JobFileChanges {
    const changes: JobFileChanges = { added: [], changed: [], removed: [], hashes: {} }
    const previous = this.previous
    const seen = new Uint8Array(previous?.size ?? 0)
    for (let position = 0; position < this.count; position++) {
      const kept = this.kept[position]!
      if (kept >= 0) seen[kept] = 1
    }
    for (const { slug, hash, previousPosition } of this.others) {
      if (previousPosition < 0) {
        changes.added.push(snapshotPaths.v2Job(slug))
        changes.hashes[slug] = [null, hash]
        continue
      }
      seen[previousPosition] = 1
      const before = previous!.hashAt(previousPosition)
      if (before === hash) continue
      changes.changed.push(snapshotPaths.v2Job(slug))
      changes.hashes[slug] = [before, hash]
    }
    for (let q = 0; q < seen.length; q++) {
      if (seen[q] === 1) continue
      changes.removed.push(previous!.pathAt(q))
      changes.hashes[previous!.slugAt(q)] = [previous!.hashAt(q), null]
    }
    return changes
  }

  private flushRun(): void {
    if (this.runFrom === this.runTo) return
    this.flushPending()
    this.parts.push(this.previous!.lines(this.runFrom, this.runTo))
    this.runFrom = this.runTo
  }

  private flushPending(): void {
    if (this.pending === '') return
    this.parts.push(Buffer.from(this.pending, 'latin1'))
    this.pending = ''
  }
}
