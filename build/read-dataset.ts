/**
 * Reads the raw records of a dataset folder: every `companies*`, `jobs*` and
 * `rates*` file (`.json` holding one record or an array, `.ndjson` one record
 * a line), found with fast-glob. Records are yielded with where they came
 * from; parsing problems become issues instead of exceptions.
 */
import { isUtf8 } from 'node:buffer'
import { open, readFile } from 'node:fs/promises'
import path from 'node:path'
import fg from 'fast-glob'
import type { DatasetIssue, RecordSource } from './issues.ts'

export type RecordKind = 'companies' | 'jobs' | 'rates'

export interface RawRecord {
  source: RecordSource
  value: unknown
}

const KIND_PATTERNS: Record<RecordKind, string> = {
  companies: '**/companies*.{json,ndjson}',
  jobs: '**/jobs*.{json,ndjson}',
  rates: '**/rates*.json',
}

/** Files of one kind, sorted so that builds are deterministic. */
export async function findDatasetFiles(dataDir: string, kind: RecordKind): Promise<string[]> {
  const files = await fg(KIND_PATTERNS[kind], { cwd: dataDir, ignore: ['**/node_modules/**'], onlyFiles: true })
  return files.sort()
}

/** Streams the records of one file; NDJSON is read a line at a time so large datasets never sit in memory as text. */
export async function* readRecords(dataDir: string, file: string, issues: DatasetIssue[]): AsyncGenerator<RawRecord> {
  const fullPath = path.join(dataDir, file)
  if (file.endsWith('.ndjson')) {
    for await (const batch of ndjsonRecordTexts(fullPath, file, issues)) {
      for (const { source, raw } of batch) {
        try {
          yield { source, value: JSON.parse(raw.toString('utf8')) }
        } catch (error) {
          issues.push({ source, message: `not valid JSON: ${(error as Error).message}` })
        }
      }
    }
    return
  }
  const text = await readJsonText(fullPath, file, issues)
  if (text === undefined) return
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch (error) {
    issues.push({ source: { file }, message: `not valid JSON: ${(error as Error).message}` })
    return
  }
  if (Array.isArray(parsed)) {
    for (const [index, value] of parsed.entries()) yield { source: { file, index }, value }
  } else {
    yield { source: { file }, value: parsed }
  }
}

/** One record's exact text: what the build cache keys on and what a build worker parses. */
export interface RecordText {
  source: RecordSource
  /** The record's UTF-8 bytes (an NDJSON line without its line break); a view, valid until the next batch. */
  raw: Buffer
  /** Bytes of the file this record took up, for progress. */
  bytes: number
}

/** NDJSON is read this much at a time; a longer line grows the buffer. */
const READ_BYTES = 4 << 20

/**
 * Streams the records of one file as text, unparsed, a batch at a time (one
 * read's worth: an async step per record cost more than finding the record):
 * NDJSON a line at a time, split as bytes, so a record the build cache
 * already knows is never decoded (a line that is not JSON is the parser's
 * problem, on a worker thread); a `.json` file is parsed here and each
 * element serialized back.
 */
export async function* readRecordTexts(
  dataDir: string,
  file: string,
  issues: DatasetIssue[],
): AsyncGenerator<RecordText[]> {
  const fullPath = path.join(dataDir, file)
  if (file.endsWith('.ndjson')) {
    yield* ndjsonRecordTexts(fullPath, file, issues)
    return
  }
  const text = await readJsonText(fullPath, file, issues)
  if (text === undefined) return
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch (error) {
    issues.push({ source: { file }, message: `not valid JSON: ${(error as Error).message}` })
    return
  }
  const values = Array.isArray(parsed) ? parsed : [parsed]
  const share = Math.floor(text.length / Math.max(1, values.length))
  yield values.map((value, index) => ({
    source: Array.isArray(parsed) ? { file, index } : { file },
    raw: Buffer.from(JSON.stringify(value)),
    bytes: share,
  }))
}

/** A UTF-8 byte-order mark: spreadsheet and Windows exports start files with one; JSON has no place for it. */
const BOM = Buffer.from([0xef, 0xbb, 0xbf])

/**
 * Why `bytes` are not UTF-8, naming the first byte that is not (1-based, as
 * editors count columns, counting the `skipped` bytes before them: a
 * byte-order mark); undefined when they are. Decoding would put U+FFFD in
 * their place and publish it.
 */
function utf8Problem(bytes: Uint8Array, skipped = 0): string | undefined {
  if (isUtf8(bytes)) return undefined
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const text = buffer.toString('utf8')
  // Bytes before the first bad one decode and encode back as they were; a U+FFFD spelled in the data is skipped.
  for (let at = text.indexOf('\uFFFD'); at !== -1; at = text.indexOf('\uFFFD', at + 1)) {
    const offset = Buffer.byteLength(text.slice(0, at))
    if (buffer[offset] === 0xef && buffer[offset + 1] === 0xbf && buffer[offset + 2] === 0xbd) continue
    return `not valid UTF-8: byte ${skipped + offset + 1} is 0x${buffer[offset]!.toString(16).padStart(2, '0')} (save the file as UTF-8)`
  }
  return 'not valid UTF-8 (save the file as UTF-8)'
}

/** A `.json` file's text, without a leading byte-order mark; undefined (with an issue) when unreadable or not UTF-8. */
async function readJsonText(fullPath: string, file: string, issues: DatasetIssue[]): Promise<string | undefined> {
  let bytes: Buffer
  try {
    bytes = await readFile(fullPath)
  } catch (error) {
    issues.push({ source: { file }, message: `cannot be read: ${(error as Error).message}` })
    return undefined
  }
  const skipped = bytes.subarray(0, 3).equals(BOM) ? BOM.length : 0
  bytes = bytes.subarray(skipped)
  const problem = utf8Problem(bytes, skipped)
  if (problem) {
    issues.push({ source: { file }, message: problem })
    return undefined
  }
  return bytes.toString('utf8')
}

const LF = 0x0a
const CR = 0x0d
const OPEN_BRACE = 0x7b

/**
 * The non-blank lines of an NDJSON file with their 1-based numbers (blank
 * lines counted), a read's worth at a time. Lines end at LF, CRLF or a lone
 * CR, as node:readline splits them. Each batch's lines are views of one
 * reused buffer, valid until the next batch is asked for.
 */
async function* ndjsonRecordTexts(
  fullPath: string,
  file: string,
  issues: DatasetIssue[],
): AsyncGenerator<RecordText[]> {
  const handle = await open(fullPath, 'r')
  try {
    let lineNumber = 0
    // One buffer for the whole file (grown for a longer line): a fresh one per read made V8 run a
    // full collection every 64 MB of the dataset, over a heap that at 1M records is large.
    let buffer = Buffer.allocUnsafe(READ_BYTES)
    let carried = 0
    for (;;) {
      if (carried === buffer.length) {
        const grown = Buffer.allocUnsafe(buffer.length * 2)
        buffer.copy(grown, 0, 0, carried)
        buffer = grown
      }
      const { bytesRead } = await handle.read(buffer, carried, buffer.length - carried, null)
      const filled = carried + bytesRead
      const atEnd = bytesRead === 0
      const batch: RecordText[] = []
      const take = (line: Buffer) => {
        lineNumber++
        const text = lineNumber === 1 && line.subarray(0, 3).equals(BOM) ? line.subarray(3) : line
        if (isBlank(text)) return
        const source = { file, line: lineNumber }
        // A line that is not UTF-8 goes no further: decoded, its bad bytes would be published as U+FFFD.
        const problem = utf8Problem(text, line.length - text.length)
        if (problem) issues.push({ source, message: problem })
        else batch.push({ source, raw: text, bytes: line.length + 1 })
      }
      let start = 0
      while (start < filled) {
        let end = buffer.indexOf(LF, start)
        if (end === -1 || end >= filled) {
          if (!atEnd) break
          end = filled
        }
        let line = buffer.subarray(start, end > start && buffer[end - 1] === CR ? end - 1 : end)
        start = end + 1
        // A lone CR ends a line too (CRLF's CR went with its LF above).
        for (let cr = line.indexOf(CR); cr !== -1; cr = line.indexOf(CR)) {
          take(line.subarray(0, cr))
          line = line.subarray(cr + 1)
        }
        take(line)
      }
      if (batch.length > 0) yield batch
      if (atEnd) return
      // The batch is done with (its views end here): the unfinished line moves to the front.
      carried = filled - Math.min(start, filled)
      buffer.copyWithin(0, filled - carried, filled)
    }
  } finally {
    await handle.close()
  }
}

/** As `line.trim() === ''` on the decoded text; a record's line starts with `{`, so that rarely decodes. */
function isBlank(line: Buffer): boolean {
  return line.length === 0 || (line[0] !== OPEN_BRACE && line.toString('utf8').trim() === '')
}
