/**
 * Shared test fixtures: a generated dataset built into a private snapshot
 * folder, and a real server on a loopback port serving it.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { type BuildResult, buildSnapshot, createProgress, generateDataset } from '../../build/index.ts'
import { type Config, type ConfigInput, loadConfig } from '../../core/index.ts'
import { type RunningServer, startServer } from '../../runtime/index.ts'

/** The generator's fixed reference date; fixtures build "as of" shortly after it. */
export const FIXTURE_NOW = new Date('2026-11-22T12:00:00Z')

export async function tempDir(prefix: string): Promise<string> {
  return mkdtemp(path.join(tmpdir(), `jobsnap-${prefix}-`))
}

export interface FixtureSnapshot {
  dataDir: string
  distDir: string
  build: BuildResult
  cleanup(): Promise<void>
}

/** A job record as the dataset files hold it, for tests that edit records by hand. */
export type RawJob = Record<string, unknown> & { id: string; slug: string; title: string; status: string }

/** Reads an NDJSON file, lets `edit` change the records in place (or add some), writes it back. */
export async function editNdjson<T>(file: string, edit: (records: T[]) => void): Promise<void> {
  const records = (await readFile(file, 'utf8'))
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as T)
  edit(records)
  await writeFile(file, `${records.map((record) => JSON.stringify(record)).join('\n')}\n`)
}

export interface GeneratedDataset {
  root: string
  dataDir: string
  distDir: string
  cleanup(): Promise<void>
}

export interface DatasetOptions {
  jobs?: number
  companies?: number
  seed?: number
  /** Names the temporary folder, for whoever finds one left behind. */
  prefix?: string
  /** Changes the generated job records before anything reads them. */
  editJobs?: (jobs: RawJob[]) => void
}

/** A seeded generated dataset in a fresh temporary folder (`data/`), with room for its snapshots (`dist/`). */
export async function generatedDataset(options: DatasetOptions = {}): Promise<GeneratedDataset> {
  const root = await tempDir(options.prefix ?? 'fixture')
  const dataDir = path.join(root, 'data')
  const distDir = path.join(root, 'dist')
  await generateDataset({
    jobs: options.jobs ?? 600,
    companies: options.companies ?? 80,
    seed: options.seed ?? 1,
    outDir: dataDir,
  })
  if (options.editJobs) await editNdjson(path.join(dataDir, 'jobs.ndjson'), options.editJobs)
  return { root, dataDir, distDir, cleanup: () => rm(root, { recursive: true, force: true }) }
}

/** A generated dataset built into a snapshot, as of `now` (default FIXTURE_NOW). */
export async function buildFixture(
  options: DatasetOptions & { now?: Date; legacyJobIndex?: boolean } = {},
): Promise<FixtureSnapshot> {
  const dataset = await generatedDataset(options)
  const build = await buildSnapshot({
    dataDir: dataset.dataDir,
    distDir: dataset.distDir,
    siteUrl: 'https://jobsnap.example',
    now: options.now ?? FIXTURE_NOW,
    progress: createProgress(process.stderr, true),
    legacyJobIndex: options.legacyJobIndex,
  })
  return { ...dataset, build }
}

function testConfig(distDir: string, overrides: ConfigInput = {}): Config {
  return loadConfig({}, { PORT: 0, HOST: '127.0.0.1', JOBSNAP_DIST: distDir, JOBSNAP_LOG: 'silent', ...overrides })
}

/** A real server on 127.0.0.1 with an ephemeral port and, by default, a fixed clock. */
export async function startFixtureServer(
  distDir: string,
  overrides: ConfigInput = {},
  clock: () => number = () => FIXTURE_NOW.getTime(),
): Promise<RunningServer> {
  return startServer({ config: testConfig(distDir, overrides), clock })
}

/** A valid, readable, deterministic UUID (version 4, RFC 4122 variant) for hand-made records. */
export function testUuid(n: number): string {
  return `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`
}

/**
 * Writes dataset files into `dir`: a `.ndjson` name takes an array of records
 * (one line each), a `.json` name takes any value (a record or an array).
 * A string value is written verbatim, for deliberately broken files.
 */
export async function writeDatasetFiles(dir: string, files: Record<string, unknown>): Promise<void> {
  await mkdir(dir, { recursive: true })
  for (const [name, content] of Object.entries(files)) {
    const body =
      typeof content === 'string'
        ? content
        : name.endsWith('.ndjson')
          ? `${(content as unknown[])
              .map((record) => (typeof record === 'string' ? record : JSON.stringify(record)))
              .join('\n')}\n`
          : JSON.stringify(content, null, 2)
    await writeFile(path.join(dir, name), body)
  }
}
