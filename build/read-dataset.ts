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

/** Streams the records of one file; NDJSON is read a line at a time so large datasets never sit in memory as text. */
export async function* readRecords(dataDir: string, file: string, issues: DatasetIssue[]): AsyncGenerator<RawRecord> {
  const fullPath = path.join(dataDir, file)
  if (file.endsWith('.ndjson')) {
    const lines = createInterface({ input: createReadStream(fullPath, 'utf8'), crlfDelay: Infinity })
    let lineNumber = 0
    for await (const line of lines) {
      lineNumber++
      if (line.trim() === '') continue
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
