/**
 * Reads the raw records of a dataset folder: every `companies*`, `jobs*` and
 * `rates*` file (`.json` holding one record or an array, `.ndjson` one record
 * a line), found with fast-glob. Records are yielded with where they came
 * from; parsing problems become issues instead of exceptions.
 */
import { createReadStream } from 'node:fs'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { createInterface } from 'node:readline'
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

/** The non-blank lines of an NDJSON file with their 1-based numbers (blank lines counted), a line at a time. */
async function* ndjsonLines(fullPath: string): AsyncGenerator<{ line: string; lineNumber: number }> {
  const lines = createInterface({ input: createReadStream(fullPath, 'utf8'), crlfDelay: Infinity })
  let lineNumber = 0
  for await (const line of lines) {
    lineNumber++
    if (line.trim() !== '') yield { line, lineNumber }
  }
}

/** Streams the records of one file; NDJSON is read a line at a time so large datasets never sit in memory as text. */
export async function* readRecords(dataDir: string, file: string, issues: DatasetIssue[]): AsyncGenerator<RawRecord> {
  const fullPath = path.join(dataDir, file)
  if (file.endsWith('.ndjson')) {
    for await (const { line, lineNumber } of ndjsonLines(fullPath)) {
      const source = { file, line: lineNumber }
      try {
        yield { source, value: JSON.parse(line) }
      } catch (error) {
        issues.push({ source, message: `not valid JSON: ${(error as Error).message}` })
      }
    }
    return
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(await readFile(fullPath, 'utf8'))
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
  text: string
  /** Bytes of the file this record took up, for progress. */
  bytes: number
}

/**
 * Streams the records of one file as text, unparsed: NDJSON a line at a time
 * (a line that is not JSON is the parser's problem, on a worker thread);
 * a `.json` file is parsed here and each element serialized back.
 */
export async function* readRecordTexts(
  dataDir: string,
  file: string,
  issues: DatasetIssue[],
): AsyncGenerator<RecordText> {
  const fullPath = path.join(dataDir, file)
  if (file.endsWith('.ndjson')) {
    for await (const { line, lineNumber } of ndjsonLines(fullPath))
      yield { source: { file, line: lineNumber }, text: line, bytes: line.length + 1 }
    return
  }
  let text: string
  try {
    text = await readFile(fullPath, 'utf8')
  } catch (error) {
    issues.push({ source: { file }, message: `cannot be read: ${(error as Error).message}` })
    return
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch (error) {
    issues.push({ source: { file }, message: `not valid JSON: ${(error as Error).message}` })
    return
  }
  const values = Array.isArray(parsed) ? parsed : [parsed]
  const share = Math.floor(text.length / Math.max(1, values.length))
  for (const [index, value] of values.entries()) {
    yield { source: Array.isArray(parsed) ? { file, index } : { file }, text: JSON.stringify(value), bytes: share }
  }
}
