/**
 * A gzipped NDJSON export (jobs.ndjson.gz, companies.ndjson.gz), streamed:
 * lines are gathered into short runs, each run becomes a gzip member of its
 * own (a gzip file may be several members; every reader decompresses them
 * as one stream), compressed on the build's worker threads, and the members
 * are written in order as they come back.
 *
 * Where a run ends depends on its lines' content hashes, not on a count, so
 * an insertion or a change moves only the runs around it; a run whose lines
 * are the same as a member of the previous snapshot's file (same hashes in
 * the same order) is copied from that file, bytes as they are, instead of
 * compressed again. A member table (private, under index/) remembers
 * each member's run key, offset, length and line count for the next build.
 *
 * Runs are short (about 16 lines, ~40 KB of jobs): gzip's window is 32 KB,
 * so longer members would compress hardly better, and after a rebuild that
 * changed 1% of the jobs at random, ~85% of 16-line runs are unchanged
 * where ~0.6% of 512-line runs would be.
 */
import { createHash, type Hash } from 'node:crypto'
import { closeSync, openSync, readFileSync, readSync, writeSync } from 'node:fs'
import type { PackedBodies } from '../core/packed-bodies.ts'

/** zlib's default level: ~3x level 9's speed for ~2% more bytes on job JSON. */
const EXPORT_GZIP_LEVEL = 6
const MEMBERS_HEADER = `jobsnap-export-members 1 gzip-${EXPORT_GZIP_LEVEL}`
const MIN_RUN_LINES = 4
const MAX_RUN_LINES = 64
/** Raw bytes per message to a worker: a few dozen runs, so both workers stay busy and messages stay few. */
const BATCH_BYTES = 1 << 20
/** Bytes of the previous file read at once, to copy the members in them. */
const READ_WINDOW = 1 << 20
/** Members compressed or read but not yet written, at most: bounds memory whatever the file's size. */
const MAX_PENDING_BATCHES = 8

export interface NdjsonExportResult {
  bytes: number
  rows: number
  /** Hex SHA-256 of the file. */
  sha256: string
  members: number
  membersReused: number
}

interface MemberRecord {
  offset: number
  length: number
  rows: number
}

/** The members of a previous export that this build may copy, by run key. */
export class PreviousMembers {
  /** The last stretch of the file read, and where it starts: members are views of it (it is never written to). */
  private window = Buffer.alloc(0)
  private windowStart = 0

  private constructor(
    private readonly fd: number,
    private readonly byKey: Map<string, MemberRecord>,
  ) {}

  /** The previous file's member table, or undefined when there is none (or it was made another way). */
  static open(file: string, tableFile: string): PreviousMembers | undefined {
    let text: string
    let fd: number
    try {
      text = readFileSync(tableFile, 'utf8')
      fd = openSync(file, 'r')
    } catch {
      return undefined
    }
    const lines = text.split('\n')
    if (lines[0] !== MEMBERS_HEADER) {
      closeSync(fd)
      return undefined
    }
    const byKey = new Map<string, MemberRecord>()
    for (const line of lines.slice(1)) {
      if (line === '') continue
      const [key, offset, length, rows] = line.split('\t')
      byKey.set(key!, { offset: Number(offset), length: Number(length), rows: Number(rows) })
    }
    return new PreviousMembers(fd, byKey)
  }

  /**
   * The member's bytes when the previous file has a run with this key. Members are asked for in
   * file order, mostly one after the other: they are read a window of ~1 MB at a time (a read per
   * member cost the exports' thread more than the copy itself when the machine was busy).
   */
  read(key: string): Buffer | undefined {
    const found = this.byKey.get(key)
    if (!found) return undefined
    const start = found.offset - this.windowStart
    if (start < 0 || start + found.length > this.window.length) {
      const window = Buffer.allocUnsafe(Math.max(READ_WINDOW, found.length))
      let done = 0
      while (done < window.length) {
        const read = readSync(this.fd, window, done, window.length - done, found.offset + done)
        if (read === 0) break
        done += read
      }
      if (done < found.length) return undefined
      this.window = window.subarray(0, done)
      this.windowStart = found.offset
      return this.window.subarray(0, found.length)
    }
    return this.window.subarray(start, start + found.length)
  }

  close(): void {
    closeSync(this.fd)
  }
}

/** True where a run may end after a line with this content hash (base64url): about one line in 16. */
function endsRun(hash: string): boolean {
  const first = hash.charCodeAt(0)
  // 'A', 'Q', 'g', 'w': base64url digits 0, 16, 32 and 48.
  return first === 65 || first === 81 || first === 103 || first === 119
}

type Gzip = (bytes: Uint8Array, ends: number[], level: number) => Promise<Buffer[]>

/** One run of a batch, in file order: compressed by the worker (the batch's next member), or copied as it was. */
interface BatchRun {
  key: string
  rows: number
  copied?: Buffer
}

interface PendingBatch {
  /** The batch's runs compressed afresh, in order. */
  members: Promise<Buffer[]>
  runs: BatchRun[]
}

export class NdjsonExportWriter {
  private readonly fd: number
  private readonly digest: Hash = createHash('sha256')
  private written = 0
  private rows = 0
  private membersTable = `${MEMBERS_HEADER}\n`
  private members = 0
  private membersReused = 0
  /**
   * The batch being gathered: the lines of its runs to compress, end to end, in memory of its
   * own (handed to the worker, not copied); the current run's lines are put at its end when it is compressed.
   */
  private batch = Buffer.allocUnsafeSlow(BATCH_BYTES + (BATCH_BYTES >> 2))
  private batchBytes = 0
  private batchEnds: number[] = []
  private batchRuns: BatchRun[] = []
  /** Bytes of copied members in the batch: they wait with it, so they count towards sending it. */
  private batchCopiedBytes = 0
  // The run being gathered: its lines, put in the batch only when the run is to be compressed.
  private runLines: (Uint8Array | number)[] = []
  private runHashes: string[] = []
  private readonly pending: PendingBatch[] = []

  /**
   * `previousBodies`: where a line given as a number (a position in a previous snapshot's packed
   * bodies) is read from, opened when first needed.
   */
  constructor(
    readonly file: string,
    private readonly tableFile: string,
    private readonly gzip: Gzip,
    private readonly previous?: PreviousMembers,
    private readonly previousBodies?: () => PackedBodies,
  ) {
    this.fd = openSync(file, 'w')
  }

  /**
   * Appends one line (without its newline); `hash` is its content hash. A line is its bytes (copied
   * when its run is compressed), or the position of a body in `previousBodies`, read only then: after
   * a 1% change most runs are copied from the previous file, and their lines are never read (at 1M
   * jobs, ~1.3 GB of bodies the exports' thread read, allocated and collected for nothing).
   */
  async add(line: Uint8Array | number, hash: string): Promise<void> {
    this.runLines.push(line)
    this.runHashes.push(hash)
    this.rows++
    const count = this.runHashes.length
    if ((count >= MIN_RUN_LINES && endsRun(hash)) || count >= MAX_RUN_LINES) await this.endRun()
  }

  /** Writes what is left and the member table; returns the file's size, lines and hash. */
  async finish(): Promise<NdjsonExportResult> {
    if (this.runHashes.length > 0) await this.endRun()
    this.sendBatch()
    while (this.pending.length > 0) await this.writeOldest()
    closeSync(this.fd)
    const table = openSync(this.tableFile, 'w')
    writeSync(table, this.membersTable)
    closeSync(table)
    return {
      bytes: this.written,
      rows: this.rows,
      sha256: this.digest.digest('hex'),
      members: this.members,
      membersReused: this.membersReused,
    }
  }

  /** Releases the file after a failure (finish closes it otherwise). */
  close(): void {
    try {
      closeSync(this.fd)
    } catch {
      // Already closed by finish.
    }
  }

  private async endRun(): Promise<void> {
    const key = createHash('sha256').update(this.runHashes.join('\n')).digest('base64url').slice(0, 22)
    const rows = this.runHashes.length
    const copied = this.previous?.read(key)
    if (copied) {
      // The copy takes the run's place among the batch's runs, so order is kept without sending the
      // batch early (a message per changed run cost the build's thread more than the gzip).
      this.batchRuns.push({ key, rows, copied })
      this.batchCopiedBytes += copied.length
    } else {
      this.putRunLines()
      this.batchEnds.push(this.batchBytes)
      this.batchRuns.push({ key, rows })
    }
    this.runLines = []
    this.runHashes = []
    if (this.batchBytes + this.batchCopiedBytes >= BATCH_BYTES) this.sendBatch()
    while (this.pending.length > MAX_PENDING_BATCHES) await this.writeOldest()
  }

  /** The run's lines, each followed by a newline, at the batch's end; previous bodies one read per consecutive stretch. */
  private putRunLines(): void {
    const lines = this.runLines
    let bodies: PackedBodies | undefined
    let needed = this.batchBytes
    for (const line of lines) {
      if (typeof line !== 'number') needed += line.length + 1
      else {
        bodies ??= this.previousBodies!()
        needed += bodies.rangeLength(line, line + 1) + 1
      }
    }
    if (needed > this.batch.length) {
      const grown = Buffer.allocUnsafeSlow(Math.max(needed, this.batch.length * 2))
      this.batch.copy(grown, 0, 0, this.batchBytes)
      this.batch = grown
    }
    let at = this.batchBytes
    for (let i = 0; i < lines.length; ) {
      const line = lines[i]!
      if (typeof line !== 'number') {
        this.batch.set(line, at)
        at += line.length
        this.batch[at++] = NEWLINE
        i++
        continue
      }
      // Consecutive positions are one range of the packed file, already joined: its commas become newlines.
      let end = i + 1
      while (end < lines.length && lines[end] === line + (end - i)) end++
      const to = line + (end - i)
      bodies!.rangeInto(line, to, this.batch.subarray(at))
      for (let position = line; position < to; position++) {
        at += bodies!.rangeLength(position, position + 1)
        this.batch[at++] = NEWLINE
      }
      i = end
    }
    this.batchBytes = at
  }

  private sendBatch(): void {
    if (this.batchRuns.length === 0) return
    let members: Promise<Buffer[]> = Promise.resolve([])
    if (this.batchEnds.length > 0) {
      members = this.gzip(new Uint8Array(this.batch.buffer, 0, this.batchBytes), this.batchEnds, EXPORT_GZIP_LEVEL)
      this.batch = Buffer.allocUnsafeSlow(BATCH_BYTES + (BATCH_BYTES >> 2))
    }
    this.pending.push({ members, runs: this.batchRuns })
    this.batchBytes = 0
    this.batchEnds = []
    this.batchRuns = []
    this.batchCopiedBytes = 0
  }

  private async writeOldest(): Promise<void> {
    const oldest = this.pending.shift()!
    const compressed = await oldest.members
    let next = 0
    for (const run of oldest.runs) {
      const member = run.copied ?? compressed[next++]!
      this.membersTable += `${run.key}\t${this.written}\t${member.length}\t${run.rows}\n`
      this.digest.update(member)
      let done = 0
      while (done < member.length) done += writeSync(this.fd, member, done, member.length - done)
      this.written += member.length
      this.members++
      if (run.copied) this.membersReused++
    }
  }
}

const NEWLINE = 0x0a
