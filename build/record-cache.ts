/**
 * The build cache: what the previous build worked out for each job record,
 * so that a rebuild after a small refresh does work in proportion to the
 * change. A record is reused (no parse, no schema pass, no transform, no HTML
 * conversion, no tokenizing) when its input text is byte-identical, its
 * company's record is unchanged, and so is the build context: the rate
 * table, the build's own sources and the locked dependency versions.
 *
 * One text file per snapshot (`index/build-cache.txt`), one line per record:
 *
 *   key \t company-hash \t position \t summary-json \t meta
 *
 * `position` is the job's place in that snapshot's packed bodies (-1 when it
 * was not published: closed or expired), where its v2 and v1 bodies are read
 * back; `meta` is JobOutputs.meta, verbatim (empty when not published).
 */
import { createHash, hash } from 'node:crypto'
import { type FileHandle, open, readFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import fg from 'fast-glob'
import type { ExchangeRates } from '../core/schema/dataset.ts'
import type { RecordSummary } from './job-record.ts'

const HEADER = 'jobsnap-build-cache 1'

/** The record's identity for the cache: a hash of its exact input bytes. */
export function recordKey(raw: Buffer): string {
  return hash('sha1', raw, 'base64url')
}

/** A company record's hash: a job made from it is reused only while this is unchanged. */
export function companyHash(company: unknown): string {
  return hash('sha1', JSON.stringify(company), 'base64url')
}

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')

/**
 * Everything besides its own record and company that a job's outputs depend
 * on. The build's sources stand in for its version: any edit to the
 * transform, the schemas or the taxonomy starts the cache afresh.
 */
export async function buildContextHash(rates: ExchangeRates): Promise<string> {
  const digest = createHash('sha256')
  digest.update(`${HEADER}\n${process.versions.node.split('.')[0]}\n${JSON.stringify(rates)}\n`)
  const sources = await fg(['build/**/*.ts', 'core/**/*.ts', 'package-lock.json'], { cwd: REPO_ROOT, onlyFiles: true })
  for (const file of sources.sort())
    digest
      .update(`${file}\0`)
      .update(await readFile(path.join(REPO_ROOT, file)))
      .update('\0')
  return digest.digest('base64url')
}

/** A base64url digit's value, by character code (0 for anything else: such a key still works, just spread worse). */
const DIGIT_VALUE = new Uint8Array(128)
for (const [value, digit] of [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'].entries())
  DIGIT_VALUE[digit.charCodeAt(0)] = value

/** Digits of a key that place it in the table: its first five, 30 evenly spread bits of a SHA-1. */
const PLACING_DIGITS = 5

const TAB = 0x09
const LF = 0x0a

/**
 * What pass 1 needs of one cached record, set by BuildCacheReader.read on an
 * object reused for every record (a million records made a million objects).
 */
export class CachedRecord {
  /** Byte offset of the line, to read the rest of it later. */
  line = 0
  /** Position in the previous snapshot's packed bodies; -1 when it was not published. */
  position = 0
  summary: RecordSummary = { id: '', slug: '', company_id: '', status: 'live', posted_at: 0 }
  /** Where its company hash is in the cache's bytes. */
  companyStart = 0
  companyEnd = 0
}

/**
 * The previous build's cache, held as bytes (outside the JS heap) with an
 * open-addressing table of line offsets in a typed array: a Map of a million
 * key strings cost seconds to build and to probe at 1M jobs.
 */
export class BuildCacheReader {
  private constructor(
    private readonly bytes: Buffer,
    /**
     * Line offsets (0: an empty slot; the header is line 0), placed by the key's first digits, probed
     * linearly; undefined where another thread does the lookups.
     */
    private readonly table: Uint32Array | undefined,
    readonly size: number,
  ) {}

  /**
   * The cache of `file` when it exists and was made in the same context;
   * otherwise undefined (a full build). `shared`: its bytes in a
   * SharedArrayBuffer, for the build's thread to read what a scanning thread
   * looked up (record-scan.ts).
   */
  static async open(file: string, contextHash: string, shared = false): Promise<BuildCacheReader | undefined> {
    const bytes = await readCache(file, `${HEADER} ${contextHash}\n`, shared)
    if (!bytes) return undefined
    let starts = new Uint32Array(1 << 16)
    let count = 0
    for (let start = bytes.indexOf(LF) + 1; start < bytes.length; ) {
      const end = bytes.indexOf(LF, start)
      if (end < 0) break
      if (count === starts.length) {
        const grown = new Uint32Array(starts.length * 2)
        grown.set(starts)
        starts = grown
      }
      starts[count++] = start
      start = end + 1
    }
    // At most half full, so that a probe rarely looks past one slot.
    let slots = 1 << 4
    while (slots < count * 2) slots *= 2
    const table = new Uint32Array(slots)
    const mask = slots - 1
    for (let n = 0; n < count; n++) {
      const start = starts[n]!
      let slot = placingOfBytes(bytes, start) & mask
      while (table[slot] !== 0) slot = (slot + 1) & mask
      table[slot] = start
    }
    return new BuildCacheReader(bytes, table, count)
  }

  /** A cache another thread opened shared (and looks keys up in): its lines read here by offset. */
  static over(bytes: SharedArrayBuffer, size: number): BuildCacheReader {
    return new BuildCacheReader(Buffer.from(bytes), undefined, size)
  }

  /** The bytes of a cache opened shared. */
  get shared(): SharedArrayBuffer | undefined {
    return this.bytes.buffer instanceof SharedArrayBuffer ? this.bytes.buffer : undefined
  }

  /** The offset of the line of `key`, or -1 when the cache does not have it (a key written twice, which no build writes: the first). */
  find(key: string): number {
    const bytes = this.bytes
    const table = this.table!
    const mask = table.length - 1
    for (let slot = placingOfText(key) & mask; ; slot = (slot + 1) & mask) {
      const line = table[slot]!
      if (line === 0) return -1
      if (bytes[line + key.length] !== TAB) continue
      let i = 0
      while (i < key.length && bytes[line + i] === key.charCodeAt(i)) i++
      if (i === key.length) return line
    }
  }

  /** Sets what pass 1 needs of the line at `line` (found by find) on `into`. */
  readAt(line: number, into: CachedRecord): void {
    const bytes = this.bytes
    const companyStart = tabAfterHash(bytes, line) + 1
    const companyEnd = tabAfterHash(bytes, companyStart)
    const positionEnd = tabAfter(bytes, companyEnd + 1)
    // The summary is a few hundred bytes: found by indexOf's native search, quicker than a loop here over so many.
    const tab = bytes.indexOf(TAB, positionEnd + 1)
    const summaryEnd = tab < 0 ? bytes.length : tab
    into.line = line
    into.companyStart = companyStart
    into.companyEnd = companyEnd
    into.position = integerAt(bytes, companyEnd + 1, positionEnd)
    into.summary = JSON.parse(bytes.toString('utf8', positionEnd + 1, summaryEnd)) as RecordSummary
  }

  /** The line's head (`key \t company-hash \t`) and summary JSON, as views of the cache's bytes. */
  headAndSummaryAt(line: number): { head: Buffer; summary: Buffer } {
    const [, companyEnd, positionEnd, summaryEnd] = this.tabsOf(line)
    return {
      head: this.bytes.subarray(line, companyEnd + 1),
      summary: this.bytes.subarray(positionEnd + 1, summaryEnd),
    }
  }

  /**
   * What the write pass needs of a reused record, without decoding anything or making an
   * object per line: the offsets of the line's fields, set on `into` (reused for every line),
   * to be read from `text` (its hash, its index entry, its terms,
   * and the rest of the line, copied into the next cache around the new position).
   */
  fieldsAt(line: number, into: CacheLineFields): void {
    const [, companyEnd, positionEnd, summaryEnd] = this.tabsOf(line)
    into.line = line
    into.companyEnd = companyEnd
    into.positionEnd = positionEnd
    into.summaryEnd = summaryEnd
    into.hashEnd = this.bytes.indexOf(0x09, summaryEnd + 1)
    into.indexedEnd = this.bytes.indexOf(0x09, into.hashEnd + 1)
    into.end = this.bytes.indexOf(0x0a, into.indexedEnd + 1)
  }

  /** The cache's bytes, which fieldsAt's offsets point into (not to be modified). */
  get text(): Buffer {
    return this.bytes
  }

  /** Offsets of the first four tabs of the line at `line`: the ends of key, company hash, position and summary. */
  private tabsOf(line: number): [number, number, number, number] {
    const keyEnd = tabAfterHash(this.bytes, line)
    const companyEnd = tabAfterHash(this.bytes, keyEnd + 1)
    const positionEnd = this.bytes.indexOf(0x09, companyEnd + 1)
    return [keyEnd, companyEnd, positionEnd, this.bytes.indexOf(0x09, positionEnd + 1)]
  }
}

/**
 * The bytes of a cache file when its first line is `header`: read into a
 * SharedArrayBuffer when `shared`. Undefined when it cannot be read or is
 * from another context (checked before reading the rest: ~1 GB at 1M jobs).
 */
async function readCache(file: string, header: string, shared: boolean): Promise<Buffer | undefined> {
  let handle: FileHandle
  try {
    handle = await open(file, 'r')
  } catch {
    return undefined
  }
  try {
    const { size } = await handle.stat()
    const bytes = shared ? Buffer.from(new SharedArrayBuffer(size)) : Buffer.allocUnsafeSlow(size)
    const readInto = async (from: number, to: number) => {
      for (let at = from; at < to; ) {
        const { bytesRead } = await handle.read(bytes, at, Math.min(to - at, 64 << 20), at)
        if (bytesRead === 0) throw new Error('cache file shrank while read')
        at += bytesRead
      }
    }
    const headerLength = Buffer.byteLength(header)
    if (size < headerLength) return undefined
    await readInto(0, headerLength)
    if (bytes.toString('utf8', 0, headerLength) !== header) return undefined
    await readInto(headerLength, size)
    return bytes
  } catch {
    return undefined
  } finally {
    await handle.close()
  }
}

/**
 * The dataset's companies by their hash (companyHash), to find a cached record's company from the hash
 * its line records, bytes against bytes: looking its company_id up in a Map (a fresh string each record,
 * hashed and compared in a table of 50,000) was ~2 s of a 1M rebuild's own thread. The hash covers the
 * company's whole record, id included, so a company with the recorded hash is the record's company, as
 * it was when the record was checked; none (-1) means it changed or is gone.
 */
export class CompanyHashTable {
  /** A company's index + 1 (0: an empty slot), placed like BuildCacheReader's lines, probed linearly. */
  private readonly table: Int32Array

  constructor(private readonly hashes: readonly string[]) {
    let slots = 1 << 4
    while (slots < hashes.length * 2) slots *= 2
    this.table = new Int32Array(slots)
    const mask = slots - 1
    for (const [index, hash] of hashes.entries()) {
      let slot = placingOfText(hash) & mask
      while (this.table[slot] !== 0) slot = (slot + 1) & mask
      this.table[slot] = index + 1
    }
  }

  /** The index of the company whose hash is bytes [start, end) of `bytes`, or -1 for none. */
  find(bytes: Uint8Array, start: number, end: number): number {
    const table = this.table
    const mask = table.length - 1
    for (let slot = placingOfBytes(bytes, start) & mask; ; slot = (slot + 1) & mask) {
      const index = table[slot]! - 1
      if (index < 0) return -1
      const hash = this.hashes[index]!
      if (hash.length !== end - start) continue
      let i = 0
      while (i < hash.length && bytes[start + i] === hash.charCodeAt(i)) i++
      if (i === hash.length) return index
    }
  }
}

/** Where a key or a company hash goes in an open-addressing table: its first PLACING_DIGITS digits' value. */
function placingOfBytes(bytes: Uint8Array, start: number): number {
  let placing = 0
  for (let i = 0; i < PLACING_DIGITS; i++) placing = (placing << 6) | DIGIT_VALUE[bytes[start + i]! & 0x7f]!
  return placing
}

/** placingOfBytes of a key or hash held as a string. */
function placingOfText(text: string): number {
  let placing = 0
  for (let i = 0; i < PLACING_DIGITS; i++) placing = (placing << 6) | DIGIT_VALUE[text.charCodeAt(i) & 0x7f]!
  return placing
}

/** Characters of a key and of a company hash: a SHA-1 in base64url. */
const HASH_LENGTH = 27

/** tabAfter for a field that is a hash (key, company hash): where its tab should be, looked at first. */
function tabAfterHash(bytes: Buffer, from: number): number {
  return bytes[from + HASH_LENGTH] === TAB ? from + HASH_LENGTH : tabAfter(bytes, from)
}

/**
 * The decimal integer written in bytes [start, end) (a position: digits, maybe a leading minus),
 * read without making a string of it; anything else goes through Number as before.
 */
function integerAt(bytes: Buffer, start: number, end: number): number {
  const negative = bytes[start] === 0x2d
  let value = 0
  let at = negative ? start + 1 : start
  if (at === end || end - at > 15) return Number(bytes.toString('latin1', start, end))
  for (; at < end; at++) {
    const digit = bytes[at]! - 0x30
    if (digit < 0 || digit > 9) return Number(bytes.toString('latin1', start, end))
    value = value * 10 + digit
  }
  return negative ? -value : value
}

/** The offset of the first tab at or after `from` (a short field: scanned here, cheaper than a call to indexOf). */
function tabAfter(bytes: Buffer, from: number): number {
  let at = from
  while (at < bytes.length && bytes[at] !== TAB) at++
  return at
}

/**
 * Where the fields of one cache line are (byte offsets into BuildCacheReader.text): `line`
 * its start, then the tab that ends each field (key, company hash, position, summary, hash,
 * index entry) and `end`, its newline.
 */
export class CacheLineFields {
  line = 0
  companyEnd = 0
  positionEnd = 0
  summaryEnd = 0
  hashEnd = 0
  indexedEnd = 0
  end = 0
}

/** The header line of a cache made in `contextHash`. */
export function cacheHeader(contextHash: string): string {
  return `${HEADER} ${contextHash}\n`
}

/** One cache line (with its newline); `summaryAndMeta` is `summary-json \t meta`. */
export function cacheLine(key: string, companyHashOfRecord: string, position: number, summaryAndMeta: string): string {
  return `${key}\t${companyHashOfRecord}\t${position}\t${summaryAndMeta}\n`
}
