/**
 * Loading a published snapshot into memory: the manifest checked against its
 * schema, the index files against the content hashes the build recorded in
 * it (or their schemas, for older snapshots), except those the snapshot's
 * verification record vouches for as they are now (core/verified-files.ts:
 * unchanged since the build or a server hashed them), the job index used as the
 * typed arrays index/jobs.bin holds, the full-text postings loaded as one
 * typed array (never re-indexed), or for a large snapshot left in the page
 * cache with its packed bodies and read by position, public files read on demand through a bounded cache.
 */
import { createHash } from 'node:crypto'
import { type BigIntStats, closeSync, fstatSync, openSync, readFileSync, readSync } from 'node:fs'
import { endianness } from 'node:os'
import { open, readFile, realpath, stat, type FileHandle } from 'node:fs/promises'
import { exportPath } from '../../core/exports.ts'
import path from 'node:path'
import { LRUCache } from 'lru-cache'
import { SerializedTerms } from '../../core/search.ts'
import { DEFAULTS } from '../../core/config.ts'
import { indexFileHash } from '../../core/content-hash.ts'
import { parseCompanyColumns } from '../../core/company-columns.ts'
import {
  fileIdentity,
  isVerified,
  readVerifiedFiles,
  recordVerifiedFiles,
  type VerifiedFiles,
} from '../../core/verified-files.ts'
import {
  arrayInSlices,
  CURRENT_LINK,
  type Encoding,
  encodedPath,
  readManifestInSlices,
  readJobIndexInSlices,
  SnapshotCompanies,
  SnapshotJobIndex,
  SnapshotManifestHead,
  type SnapshotManifest,
  SNAPSHOT_FORMAT,
  snapshotPaths,
  type IndexedCompany,
  type PackedBodiesPaths,
} from '../../core/snapshot.ts'
import {
  JOB_INDEX_PREFIX_BYTES,
  type JobIndexHead,
  jobIndexHeadBytes,
  readJobIndexHead,
  readJobIndexPartsSteps,
} from '../../core/job-index-file.ts'
import { runStepsPausing } from '../../core/steps.ts'
import { float64View, type HotBodies, PackedBodies, uint32View } from '../../core/packed-bodies.ts'
import { COMPANIES_PER_STEP, CompanyTable, CompanyTableBuilder } from '../query/company-table.ts'
import { JobIndex, JobIndexBuilder } from '../query/job-index.ts'
import type { QueryContext } from '../query/run-query.ts'
import { type PostingsFile, TextIndex } from '../query/text-index.ts'
import { type FileHashes, FileHashesBuilder } from './file-hashes.ts'

export interface LoadedSnapshot {
  id: string
  dir: string
  /** The manifest but its file map, which `files` holds. */
  manifest: LoadedManifest
  /** The content hash of each public file the manifest lists (v1 pages, the OpenAPI document, the exports). */
  files: FileHashes
  /**
   * When `<dist>/current` was last pointed at it (epoch ms; a build's publish or a rollback), when the holder
   * knows: a rollback republishes an older build, and Last-Modified must not go back with it.
   */
  publishedAt?: number
  jobs: JobIndex
  text: TextIndex
  /** The companies: the fields queries use held in arrays, the rest parsed on demand (CompanyTable). */
  companies: CompanyTable
  /** Every v2 job body by date position, held or read by position (loadSnapshot): list pages, single jobs, tool results. */
  v2Bodies: PackedBodies
  /** Every v1 job body by date position, read from the packed file one range per page. */
  v1Bodies: PackedBodies
  /** Releases what the snapshot holds open; called once no request uses it any more. */
  close(): void
  /** Reads a public file (identity or a precompressed copy) through the shared cache. */
  readPublic(relativePath: string, encoding?: 'br' | 'gzip'): Promise<Buffer | undefined>
}

/** Bounded by bytes and shared by every loaded snapshot (keys hold the snapshot folder). */
export interface FileCache {
  get(key: string): Buffer | undefined
  set(key: string, value: Buffer): unknown
  /** Bytes held now. */
  readonly calculatedSize: number
}

export function createFileCache(maxBytes: number): FileCache {
  if (maxBytes <= 0) return { get: () => undefined, set: () => undefined, calculatedSize: 0 }
  return new LRUCache<string, Buffer>({ maxSize: maxBytes, sizeCalculation: (buffer) => Math.max(1, buffer.length) })
}

async function readBytes(dir: string, file: string): Promise<Buffer> {
  try {
    return await readFile(path.join(dir, file))
  } catch (error) {
    throw new Error(`snapshot ${dir}: cannot read ${file}: ${(error as Error).message}`)
  }
}

/**
 * One buffer that a load reads its transient files into in turn: the
 * manifest, then index/jobs.bin's text, then (when a hot swap keeps the
 * served ones, only to check them) the companies, each decoded or parsed
 * before the next is read. At 1M jobs those are 90, 120 and 45 MB:
 * every fresh megabyte costs ~0.8 ms of the kernel's time to fault in, and
 * all of it was garbage a full collection had to return, so one buffer of
 * the largest of them was ~0.1 s less of every worker's start.
 */
class Scratch {
  private buffer: Buffer | undefined

  /** Makes sure the next `take`s up to `bytes` reuse one buffer. */
  reserve(bytes: number): void {
    if ((this.buffer?.length ?? -1) < bytes) this.buffer = Buffer.allocUnsafeSlow(bytes)
  }

  /** `bytes` bytes of the buffer (grown if need be), valid until the next take. */
  take(bytes: number): Buffer {
    this.reserve(bytes)
    return this.buffer!.subarray(0, bytes)
  }
}

/** A JSON.parse failure, named after the file it came from. */
function inFile(error: unknown, what: string): Error {
  return error instanceof SyntaxError ? new Error(`${what} is not JSON: ${error.message}`) : (error as Error)
}

/** Runs a JSON reader, naming the file in a parse error. */
function parsing<T>(what: string, read: () => T): T {
  try {
    return read()
  } catch (error) {
    throw inFile(error, what)
  }
}

function parseJson(bytes: Buffer, what: string): unknown {
  return parsing(what, () => JSON.parse(bytes.toString('utf8')) as unknown)
}

function verified<T>(
  schema: {
    safeParse(
      value: unknown,
    ): { success: true; data: T } | { success: false; error: { issues: { path: PropertyKey[]; message: string }[] } }
  },
  value: unknown,
  what: string,
): T {
  const parsed = schema.safeParse(value)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!
    throw new Error(`${what} is invalid at ${issue.path.join('.') || '(root)'}: ${issue.message}`)
  }
  return parsed.data
}

/**
 * Lets queued requests run. A hot swap loads the next snapshot while the
 * current one serves: at 100k jobs loading is ~1.2 s of CPU, so it goes in
 * steps of at most a few tens of milliseconds each instead of one stall.
 *
 * Two turns of setImmediate, not one: requests are read in the event loop's
 * poll phase, and a step that follows an awaited file read resumes in that
 * phase, so one setImmediate runs the next step in the check phase right
 * after it, with no poll between: the two steps were one stall (counted
 * during 1M hot swaps, the yields after a file read let no request run).
 * The second turn always starts after a poll.
 */
const yieldToRequests = () => new Promise<void>((resolve) => setImmediate(() => setImmediate(resolve)))

/** Hands each slice of a sliced reader to `use`, letting requests run before each; a bad slice names the file. */
async function eachSlice<T>(slices: Iterable<T>, what: string, use: (slice: T) => void): Promise<void> {
  try {
    for (const slice of slices) {
      await yieldToRequests()
      use(slice)
    }
  } catch (error) {
    throw inFile(error, what)
  }
}

/** Where the per-job files live: `v2/jobs/`. */
/** A snapshot's manifest as a server keeps it: its file map held apart, as FileHashes. */
type LoadedManifest = Omit<SnapshotManifest, 'files'>

/**
 * The file map checked (the per-job files are not in it: the manifest keeps them in index/job-files.txt,
 * which a server never reads, the job index holding their hashes too).
 */
function checkedFileMap(files: unknown, what: string, into: FileHashesBuilder): void {
  if (files === null || typeof files !== 'object' || Array.isArray(files))
    throw new Error(`${what} is invalid at files: expected an object`)
  const hashes = files as Record<string, unknown>
  // for-in, not Object.entries: no pair array per file (tens of thousands of v1 pages at 1M jobs).
  for (const file in hashes) {
    const hash = hashes[file]
    if (typeof hash !== 'string') throw new Error(`${what} is invalid at files.${file}: expected a string`)
    into.add(file, hash)
  }
}

/** The manifest, checked with zod except its file map (100k entries at 100k jobs), which a loop checks a slice at a time. */
async function loadManifest(bytes: Buffer, what: string): Promise<{ manifest: LoadedManifest; files: FileHashes }> {
  const sliced = parsing(what, () => readManifestInSlices(bytes))
  const raw = sliced ? sliced.head : parseJson(bytes, what)
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
    throw new Error(`${what} is invalid at (root): expected an object`)
  const { files, ...head } = raw as Record<string, unknown>
  if (head.format !== SNAPSHOT_FORMAT) {
    throw new Error(
      `${what}: snapshot format ${JSON.stringify(head.format)}, this server reads format ${SNAPSHOT_FORMAT}; rebuild it with this version's \`jobsnap build\``,
    )
  }
  const checkedHead = verified(SnapshotManifestHead, head, what)
  const checkedFiles = new FileHashesBuilder()
  if (!sliced) checkedFileMap(files, what, checkedFiles)
  else await eachSlice(sliced.files, what, (slice) => checkedFileMap(slice, what, checkedFiles))
  await yieldToRequests()
  return { manifest: checkedHead, files: checkedFiles.finish() }
}

/**
 * Checks an index file against the hash the build recorded for it (the build
 * validated the content before writing it): true when it matches, false when
 * the manifest records none (older builds: validate the content instead).
 */
function matchesRecordedHash(manifest: LoadedManifest, file: string, bytes: Buffer, what: string): boolean {
  const expected = manifest.index_hashes?.[file]
  if (expected === undefined) return false
  if (indexFileHash(bytes) !== expected)
    throw new Error(`${what} does not match the hash in the manifest (corrupted or changed after the build)`)
  return true
}

/** An index file parsed whole: trusted by its recorded hash, else checked against its schema. */
function verifiedIndex<T>(
  manifest: LoadedManifest,
  file: string,
  bytes: Buffer,
  schema: Parameters<typeof verified<T>>[0],
  what: string,
): T {
  if (matchesRecordedHash(manifest, file, bytes, what)) return parseJson(bytes, what) as T
  return verified(schema, parseJson(bytes, what), what)
}

/** The file's little-endian uint32s, as a view on the bytes read (no copy) where the machine is little-endian. */

/** fs.readFile's limit (2 GiB): a larger file is read by position whatever the setting. */
const MAX_READ_FILE_BYTES = 2 ** 31 - 1

/** The hash the build recorded for an index file; a snapshot without one is refused. */
function recordedHash(manifest: LoadedManifest, file: string, what: string): string {
  const expected = manifest.index_hashes?.[file]
  if (expected === undefined) throw new Error(`${what}: the manifest records no hash for it`)
  return expected
}

/** Bytes hashed per read when checking a large file: between reads, requests run. */
const HASH_CHUNK = 16 << 20

/**
 * What a load knows of the snapshot's verification record (core/verified-files.ts):
 * the record as read, and the files this load checked in full and found as recorded.
 */
interface Verification {
  record: VerifiedFiles
  found: VerifiedFiles
}

/** Notes a full check that passed, for the record: only when the file did not change while it was read. */
function noteVerified(verification: Verification, file: string, hash: string, stats: BigIntStats | undefined): void {
  if (stats !== undefined) verification.found[file] = { hash, identity: fileIdentity(stats) }
}

/**
 * A whole index file, with its identity when it did not change while it was
 * read (stat before and after on the same descriptor), else undefined. With
 * `scratch`, read into its buffer (valid until its next take) rather than a
 * buffer of its own.
 */
async function readWithIdentity(
  dir: string,
  file: string,
  scratch?: Scratch,
): Promise<{ bytes: Buffer; stats?: BigIntStats }> {
  let handle: FileHandle | undefined
  try {
    handle = await open(path.join(dir, file), 'r')
    const before = await handle.stat({ bigint: true })
    // Not a regular file (a pipe: its size says nothing): read to its end, into a buffer of its own.
    const intoScratch = scratch !== undefined && before.isFile()
    const bytes = intoScratch ? scratch.take(Number(before.size)) : await handle.readFile()
    if (intoScratch) await readFully(handle, bytes, 0)
    // Grown since the stat: read as a file that changed (no identity), and refused by its hash if it differs.
    const after = await handle.stat({ bigint: true })
    return fileIdentity(before) === fileIdentity(after) ? { bytes, stats: before } : { bytes }
  } catch (error) {
    throw new Error(`snapshot ${dir}: cannot read ${file}: ${(error as Error).message}`)
  } finally {
    await handle?.close()
  }
}

/** A file's size, 0 when it cannot be read (reading it then says why). */
async function fileSize(dir: string, file: string): Promise<number> {
  return (await stat(path.join(dir, file)).catch(() => undefined))?.size ?? 0
}

/** Reads exactly `into.length` bytes at `position`, or throws naming where the file ended. */
async function readFully(handle: FileHandle, into: Buffer, position: number): Promise<void> {
  for (let done = 0; done < into.length; ) {
    const { bytesRead } = await handle.read(into, done, into.length - done, position + done)
    if (bytesRead === 0) throw new Error(`the file ended at byte ${position + done}`)
    done += bytesRead
  }
}

/**
 * index/jobs.bin read as its numeric part and its text, each into a buffer
 * of its own (core/job-index-file.ts), with the file's identity when it did
 * not change while it was read. The index keeps both: its arrays and its
 * ASCII text sections are views on them.
 */
async function readJobIndexParts(
  dir: string,
  what: string,
): Promise<{ numeric: Buffer; text: Buffer; head?: JobIndexHead; stats?: BigIntStats }> {
  let handle: FileHandle | undefined
  try {
    handle = await open(path.join(dir, snapshotPaths.jobIndexBinary), 'r')
    const before = await handle.stat({ bigint: true })
    const size = Number(before.size)
    const prefix = Buffer.alloc(Math.min(size, JOB_INDEX_PREFIX_BYTES))
    await readFully(handle, prefix, 0)
    let head: JobIndexHead | undefined
    try {
      const headBytes = Buffer.allocUnsafe(Math.min(size, jobIndexHeadBytes(prefix, what)))
      await readFully(handle, headBytes, 0)
      head = readJobIndexHead(headBytes, size, what)
    } catch {
      // A damaged head: read it all as one part, so the hash check refuses it as it refuses any damage.
      head = undefined
    }
    const textStart = head?.textStart ?? size
    const numeric = Buffer.allocUnsafeSlow(textStart)
    await readFully(handle, numeric, 0)
    // A buffer of its own: the index keeps its ASCII text sections as views on it (core/packed-text.ts).
    const text = Buffer.allocUnsafeSlow(size - textStart)
    await readFully(handle, text, textStart)
    const after = await handle.stat({ bigint: true })
    return fileIdentity(before) === fileIdentity(after)
      ? { numeric, text, head, stats: before }
      : { numeric, text, head }
  } catch (error) {
    throw new Error(`snapshot ${dir}: cannot read ${snapshotPaths.jobIndexBinary}: ${(error as Error).message}`)
  } finally {
    await handle?.close()
  }
}

/** Bytes read from `file` checked against `expected`, unless the record vouches for the file as it was read. */
async function checkRead(
  verification: Verification,
  dir: string,
  file: string,
  read: { bytes: Buffer; stats?: BigIntStats },
  expected: string,
): Promise<void> {
  if (isVerified(verification.record, file, expected, read.stats)) return
  await checkHashInSlices(read.bytes, expected, `${dir}/${file}`)
  noteVerified(verification, file, expected, read.stats)
}

/**
 * Checks the file against the hash the build recorded, read a chunk at a time
 * into one buffer (nothing of it kept: the server reads it by position later),
 * so a hot swap does not stall requests and memory does not grow with it.
 * Not read at all when the verification record vouches for the file as it is.
 */
async function checkRecordedFileHash(
  manifest: LoadedManifest,
  dir: string,
  file: string,
  verification: Verification,
): Promise<void> {
  const what = `${dir}/${file}`
  const expected = recordedHash(manifest, file, what)
  const hash = createHash('sha256')
  let handle: FileHandle | undefined
  let stats: BigIntStats | undefined
  try {
    handle = await open(path.join(dir, file), 'r')
    const before = await handle.stat({ bigint: true })
    if (isVerified(verification.record, file, expected, before)) return
    const chunk = Buffer.allocUnsafeSlow(HASH_CHUNK)
    for (let at = 0; ; ) {
      const { bytesRead } = await handle.read(chunk, 0, HASH_CHUNK, at)
      if (bytesRead === 0) break
      hash.update(chunk.subarray(0, bytesRead))
      at += bytesRead
      await yieldToRequests()
    }
    const after = await handle.stat({ bigint: true })
    if (fileIdentity(before) === fileIdentity(after)) stats = before
  } catch (error) {
    throw new Error(`snapshot ${dir}: cannot read ${file}: ${(error as Error).message}`)
  } finally {
    await handle?.close()
  }
  if (hash.digest('base64url') !== expected)
    throw new Error(`${what} does not match the hash in the manifest (corrupted or changed after the build)`)
  noteVerified(verification, file, expected, stats)
}

/**
 * The search postings left in their file (their hash checked already), read a
 * list at a time by position on a descriptor kept open until `close`.
 */
function postingsInFile(file: string, what: string): PostingsFile & { close(): void } {
  const fd = openSync(file, 'r')
  const bytes = fstatSync(fd).size
  if (bytes % 4 !== 0) {
    closeSync(fd)
    throw new Error(`${what}: ${bytes} bytes is not a whole number of uint32s`)
  }
  let open = true
  return {
    length: bytes / 4,
    read(start, count) {
      const list = new Uint32Array(count)
      const into = Buffer.from(list.buffer)
      for (let done = 0; done < into.length; ) {
        const n = readSync(fd, into, done, into.length - done, start * 4 + done)
        if (n === 0) throw new Error(`${what}: file ended at byte ${start * 4 + done}`)
        done += n
      }
      if (endianness() !== 'LE') into.swap32()
      return list
    },
    close() {
      if (open) closeSync(fd)
      open = false
    },
  }
}

/** A packed-bodies lengths file, checked against its recorded hash (read, then hashed, requests running between). */
async function packedLengths(manifest: LoadedManifest, dir: string, paths: PackedBodiesPaths): Promise<Uint32Array> {
  const what = `${dir}/${paths.lengths}`
  const bytes = await readBytes(dir, paths.lengths)
  await yieldToRequests()
  if (!matchesRecordedHash(manifest, paths.lengths, bytes, what))
    throw new Error(`${what}: the manifest records no hash for it`)
  return uint32View(bytes, what)
}

/**
 * A layered pair's starts (core/packed-bodies.ts BodyLayers), checked against their recorded hash;
 * undefined when the manifest records none: the bodies are one whole file.
 */
async function packedStarts(
  manifest: LoadedManifest,
  dir: string,
  paths: PackedBodiesPaths,
): Promise<Float64Array | undefined> {
  if (manifest.index_hashes?.[paths.starts] === undefined) return undefined
  const what = `${dir}/${paths.starts}`
  const bytes = await readBytes(dir, paths.starts)
  await yieldToRequests()
  matchesRecordedHash(manifest, paths.starts, bytes, what)
  return float64View(bytes, what)
}

/**
 * The bulk exports the manifest lists, each present at its recorded size.
 * Their SHA-256 is not recomputed here (hundreds of MB at 1M jobs): it is the
 * ETag and in the index, so every client that downloads one can check it.
 */
async function checkExports(manifest: LoadedManifest, dir: string): Promise<void> {
  for (const { name, bytes } of manifest.exports) {
    const file = path.join(dir, exportPath(name))
    const found = await stat(file).catch(() => undefined)
    if (found?.size !== bytes)
      throw new Error(
        `${file}: ${found ? `${found.size} bytes, the manifest says ${bytes}` : 'missing'} (corrupted or changed after the build)`,
      )
  }
}

/** Resolves `<dist>/current` to a snapshot folder, or throws when nothing is published. */
export async function resolveCurrentSnapshot(distDir: string): Promise<string> {
  try {
    return await realpath(path.join(distDir, CURRENT_LINK))
  } catch {
    throw new Error(`no snapshot published in ${distDir} (run \`npm run build\` first)`)
  }
}

/**
 * The job index: from index/jobs.bin when the manifest records its hash (its
 * arrays used as read, checked by that hash), else built from
 * index/jobs.json a slice of jobs at a time (older snapshots).
 */
async function loadJobIndex(manifest: LoadedManifest, dir: string, verification: Verification): Promise<JobIndex> {
  const binaryHash = manifest.index_hashes?.[snapshotPaths.jobIndexBinary]
  if (binaryHash !== undefined) {
    const what = `${dir}/${snapshotPaths.jobIndexBinary}`
    const read = await readJobIndexParts(dir, what)
    if (!isVerified(verification.record, snapshotPaths.jobIndexBinary, binaryHash, read.stats)) {
      await checkHashInSlices([read.numeric, read.text], binaryHash, what)
      noteVerified(verification, snapshotPaths.jobIndexBinary, binaryHash, read.stats)
    }
    // In steps, requests running between them: at 1M jobs this was one 1-2 s stall of every hot swap.
    const file = await runStepsPausing(
      readJobIndexPartsSteps(read.numeric, read.text, what, read.head),
      yieldToRequests,
    )
    return await runStepsPausing(JobIndex.fromFileSteps(file), yieldToRequests)
  }
  const what = `${dir}/${snapshotPaths.jobIndex}`
  const bytes = await readBytes(dir, snapshotPaths.jobIndex)
  if (!matchesRecordedHash(manifest, snapshotPaths.jobIndex, bytes, what))
    return JobIndex.from(verified(SnapshotJobIndex, parseJson(bytes, what), what))
  const sliced = parsing(what, () => readJobIndexInSlices(bytes))
  if (sliced === undefined) return JobIndex.from(parseJson(bytes, what) as SnapshotJobIndex)
  const builder = new JobIndexBuilder(sliced.salaryOrder)
  await eachSlice(sliced.slices, what, (slice) => builder.add(slice))
  return builder.finish()
}

/** Checks bytes in memory (one buffer, or parts in order) against a recorded hash, a slice at a time so a hot swap does not stall requests. */
async function checkHashInSlices(bytes: Buffer | Buffer[], expected: string, what: string): Promise<void> {
  const hash = createHash('sha256')
  for (const part of Array.isArray(bytes) ? bytes : [bytes]) {
    for (let start = 0; start < part.length; start += HASH_CHUNK) {
      hash.update(part.subarray(start, start + HASH_CHUNK))
      await yieldToRequests()
    }
  }
  if (hash.digest('base64url') !== expected)
    throw new Error(`${what} does not match the hash in the manifest (corrupted or changed after the build)`)
}

/**
 * Where each element of an array jsonArrayByLine laid out (`[`, one element a line, `]`) lies in its text:
 * [starts[i], ends[i]), without the comma that ends every line but the last.
 */
function elementLines(bytes: Buffer): { starts: Uint32Array; ends: Uint32Array } {
  const starts: number[] = []
  const ends: number[] = []
  // After the opening `[` and its newline; the closing `]` follows the last element's newline.
  for (let at = 2; bytes[at] !== 0x5d; ) {
    const newline = bytes.indexOf(0x0a, at)
    if (newline < 0) break
    starts.push(at)
    ends.push(bytes[newline - 1] === 0x2c ? newline - 1 : newline)
    at = newline + 1
  }
  return { starts: Uint32Array.from(starts), ends: Uint32Array.from(ends) }
}

/**
 * The companies (runtime/query/company-table.ts), parsed a slice at a time when their hash was recorded and
 * they have the sliced layout, their file's bytes kept as every company's text; that hash checked in slices
 * too, or not at all when the verification record vouches for the file as read (one synchronous hash of the
 * 46 MB at 1M jobs was ~0.1 s of every start and one long stall of every hot swap).
 */
async function loadCompanies(
  manifest: LoadedManifest,
  dir: string,
  read: { bytes: Buffer; stats?: BigIntStats },
  verification: Verification,
): Promise<CompanyTable> {
  const what = `${dir}/${snapshotPaths.companies}`
  const expected = manifest.index_hashes?.[snapshotPaths.companies]
  if (expected === undefined)
    return CompanyTable.fromCompanies(verified(SnapshotCompanies, parseJson(read.bytes, what), what))
  await checkRead(verification, dir, snapshotPaths.companies, read, expected)
  const columnsHash = manifest.index_hashes?.[snapshotPaths.companyColumns]
  if (columnsHash !== undefined) {
    // The table's fields from their columns, the companies' text only split into lines (not parsed).
    const columnsFile = `${dir}/${snapshotPaths.companyColumns}`
    const columnsRead = await readWithIdentity(dir, snapshotPaths.companyColumns)
    await checkRead(verification, dir, snapshotPaths.companyColumns, columnsRead, columnsHash)
    const { starts, ends } = elementLines(read.bytes)
    const rows = await parseCompanyColumns(columnsRead.bytes.toString('utf8'), starts.length, yieldToRequests).catch(
      (error: Error) => {
        throw new Error(`${columnsFile} is invalid: ${error.message}`)
      },
    )
    // Added and indexed a slice at a time: at 1M jobs' 50,000 companies one stretch of both was 25-35 ms.
    const builder = new CompanyTableBuilder(starts, ends)
    for (let from = 0; from < rows.length; from += COMPANIES_PER_STEP) {
      await yieldToRequests()
      for (const row of rows.slice(from, from + COMPANIES_PER_STEP)) builder.add(row)
    }
    return await runStepsPausing(builder.finishSteps(read.bytes), yieldToRequests)
  }
  const sliced = arrayInSlices<IndexedCompany>(read.bytes)
  if (sliced === undefined) return CompanyTable.fromCompanies(parseJson(read.bytes, what) as IndexedCompany[])
  const { starts, ends } = elementLines(read.bytes)
  const builder = new CompanyTableBuilder(starts, ends)
  await eachSlice(sliced, what, (slice) => {
    for (const company of slice) builder.add(company)
  })
  try {
    return builder.finish(read.bytes)
  } catch (error) {
    throw new Error(`${what}: ${(error as Error).message}`)
  }
}

/**
 * Loads and verifies a snapshot folder fully before anything serves from it.
 * Packed v2 bodies up to `bodiesInMemoryBytes` are held in memory, larger
 * ones read by position from the file, and then the search postings too
 * (JOBSNAP_BODIES_MEMORY_MB); of those, `hotBodiesBytes` of the bodies first
 * pages show are kept in memory once read (JOBSNAP_BODIES_HOT_MB).
 */
export async function loadSnapshot(
  dir: string,
  fileCache: FileCache,
  bodiesInMemoryBytes = DEFAULTS.JOBSNAP_BODIES_MEMORY_MB * 1024 * 1024,
  /** The snapshot served now, if any: what the new one holds unchanged is shared with it (the companies). */
  previous?: LoadedSnapshot,
  hotBodiesBytes = DEFAULTS.JOBSNAP_BODIES_HOT_MB * 1024 * 1024,
): Promise<LoadedSnapshot> {
  const manifestPath = `${dir}/${snapshotPaths.manifest}`
  const scratch = new Scratch()
  scratch.reserve(Math.max(await fileSize(dir, snapshotPaths.manifest), await fileSize(dir, snapshotPaths.companies)))
  const { manifest, files } = await loadManifest(
    (await readWithIdentity(dir, snapshotPaths.manifest, scratch)).bytes,
    manifestPath,
  )
  const verification: Verification = { record: await readVerifiedFiles(dir), found: {} }
  await yieldToRequests()
  const termsBytes = await readBytes(dir, snapshotPaths.searchTerms)
  const jobs = await loadJobIndex(manifest, dir, verification)
  if (jobs.size !== manifest.counts.live_jobs) {
    throw new Error(`${dir}: index has ${jobs.size} jobs, manifest says ${manifest.counts.live_jobs}`)
  }
  await yieldToRequests()
  // Sorted now rather than by the first salary_max query, which would wait for it (~0.4 s at 1M jobs).
  jobs.salaryLowOrder()
  // Likewise the salary bounds' checkpoints (~40 ms at 1M jobs in all, otherwise up to ~20 ms of one query).
  await runStepsPausing(jobs.warmSalaryPrefixesSteps(), yieldToRequests)
  const companiesHash = manifest.index_hashes?.[snapshotPaths.companies]
  const same =
    companiesHash !== undefined && previous?.manifest.index_hashes?.[snapshotPaths.companies] === companiesHash
  // Into a buffer of its own, which the companies keep as their text; only checked, into the scratch buffer.
  const companiesRead = await readWithIdentity(dir, snapshotPaths.companies, same ? scratch : undefined)
  // The same companies as the snapshot served now (a refresh that changed no employer): its table, once this
  // file is checked to be what the manifest says. Parsed again, they were ~0.3 s of a swap's CPU at 1M jobs and a
  // second copy of the table (and its 46 MB of text) until the previous one went.
  if (same) await checkRead(verification, dir, snapshotPaths.companies, companiesRead, companiesHash)
  const companies = same ? previous.companies : await loadCompanies(manifest, dir, companiesRead, verification)
  await yieldToRequests()
  const terms = verifiedIndex(
    manifest,
    snapshotPaths.searchTerms,
    termsBytes!,
    SerializedTerms,
    `${dir}/${snapshotPaths.searchTerms}`,
  )

  // A large snapshot (v2 bodies over bodiesInMemoryBytes) leaves its v2 bodies and its search postings in their
  // files, read by position: the page cache holds one copy for every process. A body from memory is a slice;
  // from the page cache it is a system call (~2 us), which made 100k's uncached list pages (a call per job)
  // measurably slower, so a small snapshot holds both. Either way each file is checked against its recorded
  // hash (unless the verification record vouches for it), the v1 bodies by size against their lengths.
  const v2Path = `${dir}/${snapshotPaths.v2Bodies.bodies}`
  const sizeOf = async (file: string) => (await stat(path.join(dir, file)).catch(() => undefined))?.size ?? 0
  // Layered bodies (a delta over an earlier snapshot's whole file): the two files together are their size.
  const v2Starts = await packedStarts(manifest, dir, snapshotPaths.v2Bodies)
  const v2Size =
    (await sizeOf(snapshotPaths.v2Bodies.bodies)) + (v2Starts ? await sizeOf(snapshotPaths.v2Bodies.base) : 0)
  const large = v2Size > Math.min(bodiesInMemoryBytes, MAX_READ_FILE_BYTES)
  const closers: (() => void)[] = []
  const closeAll = () => {
    for (const close of closers.splice(0)) close()
  }
  let text: TextIndex
  let v2Bodies: PackedBodies
  let v1Bodies: PackedBodies
  try {
    const postingsPath = `${dir}/${snapshotPaths.searchPostings}`
    const postingsHash = manifest.index_hashes?.[snapshotPaths.searchPostings]
    const retire = (list: Uint32Array) => jobs.bitsets.retire(list)
    if (large && postingsHash !== undefined) {
      await checkRecordedFileHash(manifest, dir, snapshotPaths.searchPostings, verification)
      const postings = postingsInFile(path.join(dir, snapshotPaths.searchPostings), postingsPath)
      closers.push(() => postings.close())
      text = new TextIndex(terms, postings, jobs.size, retire)
    } else {
      const postingsRead = await readWithIdentity(dir, snapshotPaths.searchPostings)
      if (postingsHash !== undefined)
        await checkRead(verification, dir, snapshotPaths.searchPostings, postingsRead, postingsHash)
      const postings = uint32View(postingsRead.bytes, postingsPath)
      for (let k = 0; k < postings.length; k++) {
        if (postings[k]! >= jobs.size) throw new Error(`${dir}: text index points past the last job`)
      }
      text = new TextIndex(terms, postings, jobs.size, retire)
    }

    await yieldToRequests()
    // Opening packed bodies reads and hashes their lengths and sums an offset per job (~20 ms of CPU at 1M jobs,
    // several times that with other processes on the cores): in steps, requests running between them.
    const onDisk = async (paths: PackedBodiesPaths, starts: Float64Array | undefined, hot?: HotBodies) => {
      const lengths = await packedLengths(manifest, dir, paths)
      await yieldToRequests()
      const file = path.join(dir, paths.bodies)
      const layers = starts && { base: path.join(dir, paths.base), starts }
      const packed = await runStepsPausing(
        PackedBodies.inFileSteps(file, lengths, `${dir}/${paths.bodies}`, hot, layers),
        yieldToRequests,
      )
      closers.push(() => packed.close())
      return packed
    }
    // A layered pair's files are each checked: the delta, and the base it stands on.
    const v2Files = [snapshotPaths.v2Bodies.bodies, ...(v2Starts ? [snapshotPaths.v2Bodies.base] : [])]
    if (!large) {
      const reads: Buffer[] = []
      for (const file of v2Files) {
        const read = await readWithIdentity(dir, file)
        await checkRead(verification, dir, file, read, recordedHash(manifest, file, `${dir}/${file}`))
        reads.push(read.bytes)
      }
      const lengths = await packedLengths(manifest, dir, snapshotPaths.v2Bodies)
      const [delta, base] = reads as [Buffer, Buffer?]
      v2Bodies =
        v2Starts && base
          ? PackedBodies.inMemory(Buffer.concat([base, Buffer.from(','), delta]), lengths, v2Path, {
              baseBytes: base.length,
              starts: v2Starts,
            })
          : PackedBodies.inMemory(delta, lengths, v2Path)
    } else {
      for (const file of v2Files) await checkRecordedFileHash(manifest, dir, file, verification)
      v2Bodies = await onDisk(snapshotPaths.v2Bodies, v2Starts, {
        bytes: hotBodiesBytes,
        order: jobs.salaryOrder,
        rankOf: jobs.salaryRank,
      })
    }
    await yieldToRequests()
    v1Bodies = await onDisk(snapshotPaths.v1Bodies, await packedStarts(manifest, dir, snapshotPaths.v1Bodies))
    await yieldToRequests()
    for (const packed of [v2Bodies, v1Bodies]) {
      if (packed.size !== jobs.size)
        throw new Error(`${dir}: packed bodies hold ${packed.size} jobs, the index ${jobs.size}`)
    }
    await checkExports(manifest, dir)
  } catch (error) {
    closeAll()
    throw error
  }
  // What this load checked in full, so that the next load (another worker, a restart) need not: best effort.
  await recordVerifiedFiles(dir, verification.found)

  // Snapshot paths are built from validated names (never from raw input), so plain concatenation is safe.
  const root = dir.endsWith(path.sep) ? dir : dir + path.sep
  const readPublic = async (relativePath: string, encoding?: Encoding) => {
    const full = encodedPath(root + relativePath, encoding)
    const cached = fileCache.get(full)
    if (cached) return cached
    try {
      // Synchronous on purpose: these are small files the page cache holds, read in microseconds;
      // fs/promises' open/stat/read/close through the thread pool cost ~4 round trips and halved throughput.
      const bytes = readFileSync(full)
      fileCache.set(full, bytes)
      return bytes
    } catch {
      return undefined
    }
  }

  return {
    id: manifest.snapshot_id,
    dir,
    manifest,
    files,
    jobs,
    text,
    companies,
    v2Bodies,
    v1Bodies,
    close: closeAll,
    readPublic,
  }
}

/** What the query engine needs of a snapshot at one instant. */
export function queryContext(snapshot: LoadedSnapshot, now: number): QueryContext {
  return {
    index: snapshot.jobs,
    text: snapshot.text,
    now,
    companyIdOf: (slug) => {
      const i = snapshot.companies.indexOfSlug(slug)
      return i === undefined ? undefined : snapshot.companies.id(i)
    },
    companySlugOf: (id) => {
      const i = snapshot.companies.indexOfId(id)
      return i === undefined ? undefined : snapshot.companies.slug(i)
    },
  }
}
