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
import { open, readFile } from 'node:fs/promises'
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

/** One cached record, as the build uses it. */
export interface CachedRecord {
  companyHash: string
  /** Position in the previous snapshot's packed bodies; -1 when it was not published. */
  position: number
  summary: RecordSummary
  /** Byte offset of the line, to read the rest of it later. */
  line: number
}

/** The previous build's cache, held as bytes (outside the JS heap) with an index of keys to lines. */
export class BuildCacheReader {
  private constructor(
    private readonly bytes: Buffer,
    private readonly lines: Map<string, number>,
  ) {}

  /** The cache of `file` when it exists and was made in the same context; otherwise undefined (a full build). */
  static async open(file: string, contextHash: string): Promise<BuildCacheReader | undefined> {
    const header = `${HEADER} ${contextHash}\n`
    let bytes: Buffer
    try {
      // The header first: a cache made by other code (the first build after an upgrade) is ~1 GB at 1M
      // jobs, not to be read in only to be dropped, beside everything a full build holds.
      const handle = await open(file)
      try {
        const head = Buffer.alloc(Buffer.byteLength(header))
        const { bytesRead } = await handle.read(head, 0, head.length, 0)
        if (bytesRead < head.length || head.toString('utf8') !== header) return undefined
      } finally {
        await handle.close()
      }
      bytes = await readFile(file)
    } catch {
      return undefined
    }
    const headerEnd = bytes.indexOf(0x0a)
    if (headerEnd < 0 || bytes.toString('utf8', 0, headerEnd) !== header.slice(0, -1)) return undefined
    const lines = new Map<string, number>()
    for (let start = headerEnd + 1; start < bytes.length; ) {
      const tab = bytes.indexOf(0x09, start)
      const end = bytes.indexOf(0x0a, start)
      if (tab < 0 || end < 0) break
      lines.set(bytes.toString('latin1', start, tab), start)
      start = end + 1
    }
    return new BuildCacheReader(bytes, lines)
  }

  get size(): number {
    return this.lines.size
  }

  lookup(key: string): CachedRecord | undefined {
    const line = this.lines.get(key)
    if (line === undefined) return undefined
    const [keyEnd, companyEnd, positionEnd, summaryEnd] = this.tabsOf(line)
    return {
      companyHash: this.bytes.toString('latin1', keyEnd + 1, companyEnd),
      position: Number(this.bytes.toString('latin1', companyEnd + 1, positionEnd)),
      summary: JSON.parse(this.bytes.toString('utf8', positionEnd + 1, summaryEnd)) as RecordSummary,
      line,
    }
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
   * to be read from `text` (its hash, its index entry, copied into index/jobs.json, its terms,
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
    const keyEnd = this.bytes.indexOf(0x09, line)
    const companyEnd = this.bytes.indexOf(0x09, keyEnd + 1)
    const positionEnd = this.bytes.indexOf(0x09, companyEnd + 1)
    return [keyEnd, companyEnd, positionEnd, this.bytes.indexOf(0x09, positionEnd + 1)]
  }
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
