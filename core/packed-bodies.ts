/**
 * Response bodies packed one after the other in date order, joined by commas
 * (core/snapshot.ts PackedBodiesPaths). Positions i..j-1 are one contiguous
 * range that is already the inside of a JSON array, so a date-ordered page is
 * a single slice and any other page is a few slices and one copy.
 *
 * Two homes for the bytes: in memory, or a file read with positional reads
 * on a descriptor kept open (what the server does with both the v2 and the
 * v1 bodies: the kernel's page cache then holds one copy for every process
 * on the machine, and keeps it across restarts, where a copy in each
 * process was 1.6 GB per worker at 1M jobs). A body from the page cache
 * costs one system call (~2 us); a list page reads its bodies straight
 * into the page's buffer, one read per run of bodies close together, except
 * the few it keeps in memory once read (HotBodies).
 *
 * Bodies may also come in two layers (BodyLayers): a base file, a previous
 * snapshot's whole bodies file left where it is, and a delta file with only
 * the bodies the base does not have. A rebuild that changed 1% of a million
 * jobs then writes ~1% of the bytes instead of copying 3.4 GB, and a
 * position's body is wherever `starts` says. Ranges read as one piece where
 * the positions are consecutive in one file, in a few pieces where not.
 */
import { closeSync, existsSync, fstatSync, openSync, readFileSync, readlinkSync, readSync } from 'node:fs'
import { endianness } from 'node:os'
import path from 'node:path'
import type { PackedBodiesPaths } from './snapshot.ts'
import { runSteps, type Steps } from './steps.ts'

const COMMA = Buffer.from(',')
const COMMA_BYTE = 0x2c

/**
 * Where the packed bytes live: `read(start, end)` returns bytes [start, end); `copy` puts them in `into`
 * from byte `at` (0 when not given): at an offset rather than into a view of `into`, so a page of a
 * hundred bodies makes no hundred Buffer objects for the collector.
 */
interface ByteSource {
  read(start: number, end: number): Buffer
  copy(start: number, end: number, into: Buffer, at?: number): void
  close(): void
  /** Whether each read is a system call (a file): then a page's nearby bodies are read together. */
  readonly perCall: boolean
}

/**
 * A page's bodies that lie close together in the file (a date-ordered page
 * of a broad filter: positions a few apart) are one read: consecutive bodies
 * are already joined by commas there, and the few bodies not asked for in
 * between cost less to read past than a system call each. At 1M jobs this
 * saves 11% of the random mix's reads and made join ~15% cheaper (interleaved
 * A/B, same bytes); a 16 KB gap made it slower (more bytes copied).
 */
const GAP_READ_BYTES = 4096
/** Longest span read at once when bodies not asked for are in it (the scratch buffer it goes through). */
const SPAN_READ_BYTES = 64 << 10

/**
 * What a file-backed instance keeps in memory once read: the bodies list
 * pages show most. First pages are what clients read, and a first page is
 * the newest matches or the best paid ones: in the bench's random mix at 1M
 * jobs, the newest 1% of jobs and the best-paid 1% were 70% of the bodies
 * read (2.5% of each, 79%: bench/body-reads.ts). Each kept body costs its
 * bytes in this process once, and saves a system call per page that shows it.
 */
export interface HotBodies {
  /** Bytes at most: half for the newest jobs (the lowest positions), the rest for the best paid. */
  bytes: number
  /** Positions in the second order (salary, best paid first). */
  order: Uint32Array
  /** The inverse: each position's rank in `order`. */
  rankOf: Uint32Array
}

/**
 * Where each body of a layered pair is. Positions address one space: the
 * base's bytes, then one comma, then the delta's (so a body at `start` is in
 * the delta when start > the base's size, at start - size - 1 there); two
 * positions whose bodies follow each other in one file are then a comma
 * apart there too, and a run of them is one read.
 */
export interface BodyLayers {
  /** The base file: a previous snapshot's whole bodies file. */
  base: string
  /** Each position's start in that space (core/snapshot.ts PackedBodiesPaths `starts`). */
  starts: Float64Array
}

export class PackedBodies {
  /** offsets[i] is where body i starts; offsets[size] is one past the end, as if a comma followed the last body. */
  private readonly offsets: Float64Array
  /**
   * Where body i starts in the bytes `source` reads: `offsets` itself when the bodies are one file in
   * position order, a position's start in the layers' space (BodyLayers) when not.
   */
  private readonly starts: Float64Array

  private constructor(
    private readonly source: ByteSource,
    offsets: Float64Array,
    starts?: Float64Array,
  ) {
    this.offsets = offsets
    this.starts = starts ?? offsets
  }

  /**
   * Bodies held in memory: every read is a slice of `bytes`, no copy. With `layers`, `bytes` are a
   * layered pair's base, a comma and the delta, one after the other (`baseBytes` the base's length).
   */
  static inMemory(
    bytes: Buffer,
    lengths: Uint32Array,
    what: string,
    layers?: { baseBytes: number; starts: Float64Array },
  ): PackedBodies {
    const offsets = layers
      ? runSteps(
          layeredOffsetsSteps(lengths, layers.starts, layers.baseBytes, bytes.length - layers.baseBytes - 1, what),
        )
      : offsetsOf(lengths, bytes.length, what)
    return new PackedBodies(
      {
        read: (start, end) => bytes.subarray(start, end),
        copy: (start, end, into, at = 0) => bytes.copy(into, at, start, end),
        close: () => {},
        perCall: false,
      },
      offsets,
      layers?.starts,
    )
  }

  /**
   * Bodies left in the file at `file`, read with positional reads on a
   * descriptor held open until `close` (the server closes a replaced
   * snapshot only after the requests that took it have finished).
   */
  static inFile(file: string, lengths: Uint32Array, what: string, hot?: HotBodies, layers?: BodyLayers): PackedBodies {
    return runSteps(PackedBodies.inFileSteps(file, lengths, what, hot, layers))
  }

  /**
   * inFile in steps of a few milliseconds at 1M jobs (a hot swap opens the bodies between requests).
   * With `layers`, `file` is the delta and every position is checked to lie inside one of the two files.
   */
  static *inFileSteps(
    file: string,
    lengths: Uint32Array,
    what: string,
    hot?: HotBodies,
    layers?: BodyLayers,
  ): Steps<PackedBodies> {
    const fds: number[] = []
    let opened = false
    try {
      const fd = openSync(file, 'r')
      fds.push(fd)
      const fileSize = fstatSync(fd).size
      let offsets: Float64Array
      let copy: ByteSource['copy']
      if (layers) {
        const baseFd = openSync(layers.base, 'r')
        fds.push(baseFd)
        const baseSize = fstatSync(baseFd).size
        offsets = yield* layeredOffsetsSteps(lengths, layers.starts, baseSize, fileSize, what)
        copy = (start, end, into, at = 0) => copyLayered(baseFd, baseSize, fd, start, end, into, at, what)
      } else {
        offsets = yield* offsetsSteps(lengths, fileSize, what)
        copy = (start, end, into, at = 0) => {
          readInto(fd, into, start, end, what, at)
        }
      }
      let open = true
      const source: ByteSource = {
        read(start, end) {
          const bytes = Buffer.allocUnsafe(end - start)
          copy(start, end, bytes, 0)
          return bytes
        },
        copy,
        close() {
          if (open) for (const each of fds) closeSync(each)
          open = false
        },
        perCall: true,
      }
      const packed = new PackedBodies(source, offsets, layers?.starts)
      if (hot && hot.bytes > 0) {
        yield
        packed.hot = new HotSet(offsets, packed.starts, hot, source)
      }
      opened = true
      return packed
    } finally {
      // A failed check, or steps left unfinished: the descriptors go with them.
      if (!opened) for (const each of fds) closeSync(each)
    }
  }

  /** Whether the bodies come in layers (BodyLayers). */
  get layered(): boolean {
    return this.starts !== this.offsets
  }

  /** Where body `position` starts in the bytes read: the file's, or the layers' space (BodyLayers). */
  startOf(position: number): number {
    return this.starts[position]!
  }

  /** The byte length of body `position`. */
  lengthOf(position: number): number {
    return this.offsets[position + 1]! - 1 - this.offsets[position]!
  }

  get size(): number {
    return this.offsets.length - 1
  }

  /** The body at `position`. */
  body(position: number): Buffer {
    return this.range(position, position + 1)
  }

  /** Bodies `from`..`to - 1` joined by commas (empty when from >= to). */
  range(from: number, to: number): Buffer {
    if (from >= to) return Buffer.alloc(0)
    if (!this.layered) return this.source.read(this.offsets[from]!, this.offsets[to]! - 1)
    const out = Buffer.allocUnsafe(this.rangeLength(from, to))
    this.copyLayeredRange(from, to, out, 0)
    return out
  }

  /**
   * Layered bodies `from`..`to - 1`, joined by commas, into `out` from `at`: one read per stretch of
   * positions that follow each other in one file. Returns where they end.
   */
  private copyLayeredRange(from: number, to: number, out: Buffer, at: number): number {
    const starts = this.starts
    let first = from
    for (let p = from; p < to; p++) {
      const end = starts[p]! + this.lengthOf(p)
      if (p + 1 < to && starts[p + 1] === end + 1) continue
      if (end > starts[first]!) this.source.copy(starts[first]!, end, out, at)
      at += end - starts[first]!
      if (p + 1 < to) out[at++] = COMMA_BYTE
      first = p + 1
    }
    return at
  }

  /** The byte length of range(from, to). */
  rangeLength(from: number, to: number): number {
    return from < to ? this.offsets[to]! - 1 - this.offsets[from]! : 0
  }

  /**
   * range(from, to) put at the front of `into` (at least rangeLength bytes): from a file, read
   * straight there, with no buffer between. Returns that part of `into`.
   */
  rangeInto(from: number, to: number, into: Buffer): Buffer {
    const length = this.rangeLength(from, to)
    if (this.layered) this.copyLayeredRange(from, to, into, 0)
    else if (length > 0) this.source.copy(this.offsets[from]!, this.offsets[from]! + length, into)
    return into.subarray(0, length)
  }

  /** The byte length of framedRange(from, to, head, tail). */
  framedLength(from: number, to: number, head: string, tail: string): number {
    const bodies = from < to ? this.offsets[to]! - 1 - this.offsets[from]! : 0
    return Buffer.byteLength(head) + bodies + Buffer.byteLength(tail)
  }

  /**
   * `head`, bodies `from`..`to - 1` joined by commas, then `tail`, written to
   * the front of `into` (a buffer made for it when not given; at least
   * framedLength bytes when given); returns the bytes written. A v1 page is
   * one such range: reading it into a buffer of its own and then copying it
   * into the page's made two ~50 KB allocations a request, and V8 collects
   * after every few MB of those.
   */
  framedRange(from: number, to: number, head: string, tail: string, into?: Buffer): Buffer {
    const start = from < to ? this.offsets[from]! : 0
    const end = from < to ? this.offsets[to]! - 1 : 0
    const headBytes = Buffer.byteLength(head)
    const length = headBytes + (end - start) + Buffer.byteLength(tail)
    const out = into ? into.subarray(0, length) : Buffer.allocUnsafe(length)
    out.write(head, 0)
    if (this.layered) this.copyLayeredRange(from, to, out, headBytes)
    else if (end > start) this.source.copy(start, end, out, headBytes)
    out.write(tail, headBytes + (end - start))
    return out
  }

  /**
   * The bodies at ascending `positions`, joined by commas. Consecutive runs
   * are single slices; from a file, the whole span is one read.
   */
  pick(positions: readonly number[]): Buffer {
    if (positions.length === 0) return Buffer.alloc(0)
    const first = positions[0]!
    const last = positions[positions.length - 1]!
    if (last - first + 1 === positions.length) return this.range(first, last + 1)
    // A span mostly made of bodies not asked for is not worth reading whole.
    if (last - first + 1 > 2 * positions.length + 64) return this.join(positions)
    const span = this.range(first, last + 1)
    const base = this.offsets[first]!
    const parts: Buffer[] = []
    for (let i = 0; i < positions.length; i++) {
      const p = positions[i]!
      if (i > 0) parts.push(COMMA)
      parts.push(span.subarray(this.offsets[p]! - base, this.offsets[p + 1]! - 1 - base))
    }
    return Buffer.concat(parts)
  }

  /**
   * The bodies at `positions` in the order given (any order), joined by commas;
   * between `head` and `tail` when given, copied once into one buffer (a list
   * page framed afterwards was a second copy of up to ~170 KB per request),
   * which `allocate` provides when given (the server's ring of list pages).
   */
  join(
    positions: readonly number[],
    head?: Buffer,
    tail?: Buffer,
    allocate: (length: number) => Buffer = Buffer.allocUnsafe,
  ): Buffer {
    const offsets = this.offsets
    let length = (head?.length ?? 0) + (tail?.length ?? 0) + Math.max(0, positions.length - 1)
    for (let i = 0; i < positions.length; i++) {
      const p = positions[i]!
      length += offsets[p + 1]! - 1 - offsets[p]!
    }
    const out = allocate(length)
    let at = head ? head.copy(out, 0) : 0
    at = this.source.perCall ? this.joinRuns(positions, out, at) : this.joinEach(positions, out, at)
    if (tail) tail.copy(out, at)
    return out
  }

  /** Each body straight to its place in `out` (no buffer of its own): join's bodies, from `at`; returns where they end. */
  private joinEach(positions: readonly number[], out: Buffer, at: number): number {
    const offsets = this.offsets
    const starts = this.starts
    for (let i = 0; i < positions.length; i++) {
      const p = positions[i]!
      if (i > 0) out[at++] = COMMA_BYTE
      const start = starts[p]!
      const end = start + offsets[p + 1]! - 1 - offsets[p]!
      if (end > start) this.source.copy(start, end, out, at)
      at += end - start
    }
    return at
  }

  private scratch: Buffer | undefined
  /** A file-backed instance's bodies kept in memory once read (HotBodies). */
  private hot: HotSet | undefined

  /**
   * joinEach with a read per run of bodies close together in the file (GAP_READ_BYTES): consecutive
   * positions straight into `out` (the file's commas are the page's), others through a scratch buffer.
   */
  private joinRuns(positions: readonly number[], out: Buffer, at: number): number {
    const offsets = this.offsets
    const starts = this.starts
    const hot = this.hot
    for (let i = 0; i < positions.length; ) {
      if (i > 0) out[at++] = COMMA_BYTE
      if (hot?.holds(positions[i]!)) {
        at += hot.copy(positions[i]!, out, at)
        i++
        continue
      }
      const runStart = starts[positions[i]!]!
      let runEnd = runStart + offsets[positions[i]! + 1]! - 1 - offsets[positions[i]!]!
      let adjacent = true
      let j = i + 1
      for (; j < positions.length; j++) {
        const p = positions[j]!
        const start = starts[p]!
        const end = start + offsets[p + 1]! - 1 - offsets[p]!
        if (start <= runEnd || start - runEnd > GAP_READ_BYTES || end - runStart > SPAN_READ_BYTES) break
        if (hot?.holds(p)) break
        // Consecutive bodies are a comma apart in the file (their positions consecutive in a flat file).
        adjacent &&= start === runEnd + 1
        runEnd = end
      }
      if (j === i + 1 || adjacent) {
        if (runEnd > runStart) this.source.copy(runStart, runEnd, out, at)
        at += runEnd - runStart
        i = j
        continue
      }
      this.scratch ??= Buffer.allocUnsafeSlow(SPAN_READ_BYTES)
      const span = this.scratch
      this.source.copy(runStart, runEnd, span, 0)
      for (let k = i; k < j; k++) {
        const p = positions[k]!
        if (k > i) out[at++] = COMMA_BYTE
        const start = starts[p]! - runStart
        at += span.copy(out, at, start, start + offsets[p + 1]! - 1 - offsets[p]!)
      }
      i = j
    }
    return at
  }

  /** Releases the file descriptor of a file-backed instance. */
  close(): void {
    this.source.close()
  }
}

/**
 * The bodies HotBodies chooses, in one buffer: the newest positions' bytes as
 * the file has them (its first bytes), then the best paid in salary order.
 * Each is read from the file the first time a page shows it, so loading reads
 * nothing more, and memory grows only with the bodies pages ask for (the
 * buffer's untouched pages are never resident).
 */
class HotSet {
  /** Positions below this are held (the newest). */
  private readonly newestEnd: number
  /** Ranks below this are held, for positions at or past newestEnd (the best paid). */
  private readonly rankEnd: number
  private readonly rankOf: Uint32Array
  /** Where rank r's body starts in `bytes`. */
  private readonly rankAt: Float64Array
  /** One flag per held body: 1 once read from the file. Newest by position, then best paid by rank. */
  private readonly filled: Uint8Array
  private readonly bytes: Buffer

  constructor(
    private readonly offsets: Float64Array,
    /** Where each body is read from (PackedBodies' `starts`). */
    private readonly starts: Float64Array,
    hot: HotBodies,
    private readonly source: ByteSource,
  ) {
    const size = offsets.length - 1
    const lengthOf = (p: number) => offsets[p + 1]! - 1 - offsets[p]!
    // The newest: the largest prefix of positions whose bytes fit half the budget.
    let newestEnd = 0
    while (newestEnd < size && offsets[newestEnd + 1]! <= hot.bytes / 2) newestEnd++
    const newestBytes = offsets[newestEnd]!
    // The best paid, in salary order, while they fit what is left (the newest among them are held already).
    let used = 0
    let rankEnd = 0
    for (; rankEnd < size; rankEnd++) {
      const p = hot.order[rankEnd]!
      if (p < newestEnd) continue
      if (newestBytes + used + lengthOf(p) > hot.bytes) break
      used += lengthOf(p)
    }
    const rankAt = new Float64Array(rankEnd)
    for (let r = 0, at = newestBytes; r < rankEnd; r++) {
      rankAt[r] = at
      const p = hot.order[r]!
      if (p >= newestEnd) at += lengthOf(p)
    }
    this.newestEnd = newestEnd
    this.rankEnd = rankEnd
    this.rankOf = hot.rankOf
    this.rankAt = rankAt
    this.filled = new Uint8Array(newestEnd + rankEnd)
    this.bytes = Buffer.allocUnsafeSlow(newestBytes + used)
  }

  /** Whether position p's body is one of those held. */
  holds(p: number): boolean {
    return p < this.newestEnd || this.rankOf[p]! < this.rankEnd
  }

  /** Copies held position p's body into `out` at `at` (reading it from the file the first time); returns its length. */
  copy(p: number, out: Buffer, at: number): number {
    const length = this.offsets[p + 1]! - 1 - this.offsets[p]!
    const newest = p < this.newestEnd
    const slot = newest ? p : this.newestEnd + this.rankOf[p]!
    const from = newest ? this.offsets[p]! : this.rankAt[this.rankOf[p]!]!
    if (this.filled[slot] === 0) {
      const start = this.starts[p]!
      if (length > 0) this.source.copy(start, start + length, this.bytes, from)
      this.filled[slot] = 1
    }
    return this.bytes.copy(out, at, from, from + length)
  }
}

/**
 * Bytes [start, end) of a layered pair's space (BodyLayers) into `into` from `at`: from the base (open as
 * `baseFd`, `baseSize` bytes), the comma between, the delta (open as `deltaFd`), whichever the range covers.
 */
function copyLayered(
  baseFd: number,
  baseSize: number,
  deltaFd: number,
  start: number,
  end: number,
  into: Buffer,
  at: number,
  what: string,
): void {
  if (start < baseSize) readInto(baseFd, into, start, Math.min(end, baseSize), `${what} (its base)`, at)
  if (start <= baseSize && end > baseSize) into[at + baseSize - start] = COMMA_BYTE
  if (end > baseSize + 1) {
    const from = Math.max(start, baseSize + 1)
    readInto(deltaFd, into, from - baseSize - 1, end - baseSize - 1, what, at + from - start)
  }
}

/** Reads bytes [start, end) of the file open as `fd` into `into` from byte `at`; returns how many. */
function readInto(fd: number, into: Buffer, start: number, end: number, what: string, at = 0): number {
  let done = 0
  while (done < end - start) {
    const n = readSync(fd, into, at + done, end - start - done, start + done)
    if (n === 0) throw new Error(`${what}: file ended at byte ${start + done}, expected ${end}`)
    done += n
  }
  return done
}

/** Start offsets from body lengths, checked against the packed file's size. */
function offsetsOf(lengths: Uint32Array, totalBytes: number, what: string): Float64Array {
  return runSteps(offsetsSteps(lengths, totalBytes, what))
}

/**
 * Lengths summed (and, for a layered pair, checked) per step: a layered pair's 262,144 were a step of
 * ~5 ms alone, 20-40 ms in a worker serving under load while it loaded (profiled during hot swaps).
 */
const OFFSETS_PER_STEP = 1 << 16

function* offsetsSteps(lengths: Uint32Array, totalBytes: number, what: string): Steps<Float64Array> {
  const offsets = new Float64Array(lengths.length + 1)
  for (let from = 0; from < lengths.length; from += OFFSETS_PER_STEP) {
    if (from > 0) yield
    const to = Math.min(lengths.length, from + OFFSETS_PER_STEP)
    for (let i = from; i < to; i++) offsets[i + 1] = offsets[i]! + lengths[i]! + 1
  }
  const expected = lengths.length === 0 ? 0 : offsets[lengths.length]! - 1
  if (expected !== totalBytes) throw new Error(`${what}: ${totalBytes} bytes, but its lengths add up to ${expected}`)
  return offsets
}

/**
 * A layered pair's offsets (logical, as offsetsSteps makes them), checking that each position's body
 * lies whole inside the base (`baseSize` bytes) or the delta (`deltaSize`), as `starts` places it.
 */
function* layeredOffsetsSteps(
  lengths: Uint32Array,
  starts: Float64Array,
  baseSize: number,
  deltaSize: number,
  what: string,
): Steps<Float64Array> {
  if (starts.length !== lengths.length)
    throw new Error(`${what}: ${starts.length} body starts for ${lengths.length} lengths`)
  const offsets = new Float64Array(lengths.length + 1)
  for (let from = 0; from < lengths.length; from += OFFSETS_PER_STEP) {
    if (from > 0) yield
    const to = Math.min(lengths.length, from + OFFSETS_PER_STEP)
    for (let i = from; i < to; i++) {
      offsets[i + 1] = offsets[i]! + lengths[i]! + 1
      const start = starts[i]!
      const end = start + lengths[i]!
      const inside = start >= 0 && (end <= baseSize || (start > baseSize && end <= baseSize + 1 + deltaSize))
      if (!inside || !Number.isInteger(start))
        throw new Error(
          `${what}: body ${i} (${lengths[i]} bytes at ${start}) is not inside its base (${baseSize} bytes) or delta (${deltaSize})`,
        )
    }
  }
  return offsets
}

/** Float64s in little-endian order (a layered pair's starts) as a Float64Array: a view when it can be, else a copy. */
export function float64View(bytes: Buffer, what: string): Float64Array {
  if (bytes.length % 8 !== 0) throw new Error(`${what}: ${bytes.length} bytes is not a whole number of float64s`)
  if (endianness() === 'LE' && bytes.byteOffset % 8 === 0)
    return new Float64Array(bytes.buffer, bytes.byteOffset, bytes.length / 8)
  const values = new Float64Array(bytes.length / 8)
  for (let i = 0; i < values.length; i++) values[i] = bytes.readDoubleLE(i * 8)
  return values
}

/**
 * A snapshot's packed bodies as its files are (whole, or layered when its starts file is there), with
 * no hash checked: how the build reads back a snapshot it made (the server checks first:
 * runtime/snapshot/load.ts).
 */
export function openPackedBodies(dir: string, paths: PackedBodiesPaths): PackedBodies {
  const what = `${dir}/${paths.bodies}`
  const lengths = uint32View(readFileSync(path.join(dir, paths.lengths)), `${dir}/${paths.lengths}`)
  const layers = bodyLayersIn(dir, paths)
  return PackedBodies.inFile(path.join(dir, paths.bodies), lengths, what, undefined, layers)
}

/** A snapshot's BodyLayers when its bodies are layered (its starts file is there), else undefined. */
function bodyLayersIn(dir: string, paths: PackedBodiesPaths): BodyLayers | undefined {
  const startsFile = path.join(dir, paths.starts)
  if (!existsSync(startsFile)) return undefined
  return { base: path.join(dir, paths.base), starts: float64View(readFileSync(startsFile), `${dir}/${paths.starts}`) }
}

/** The id of the snapshot whose whole bodies file a layered snapshot's `base` links to; undefined when whole. */
export function bodiesBaseId(dir: string, paths: PackedBodiesPaths): string | undefined {
  try {
    return /^\.\.\/\.\.\/([^/]+)\/index\/[^/]+$/.exec(readlinkSync(path.join(dir, paths.base)))?.[1]
  } catch {
    return undefined
  }
}

/** Little-endian uint32s (a lengths file, the postings) as a Uint32Array: a view when it can be, else a copy. */
export function uint32View(bytes: Buffer, what: string): Uint32Array {
  if (bytes.length % 4 !== 0) throw new Error(`${what}: ${bytes.length} bytes is not a whole number of uint32s`)
  if (endianness() === 'LE' && bytes.byteOffset % 4 === 0)
    return new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4)
  const values = new Uint32Array(bytes.length / 4)
  for (let i = 0; i < values.length; i++) values[i] = bytes.readUInt32LE(i * 4)
  return values
}
