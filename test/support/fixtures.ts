/**
 * Shared test fixtures: a generated dataset built into a private snapshot
 * folder, and a real server on a loopback port serving it.
 */
import { execFile } from 'node:child_process'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { buildSnapshot, type BuildResult } from '../../build/build.ts'
import { generateDataset } from '../../build/generate.ts'
import { loadConfig, type Config, type ConfigInput } from '../../core/config.ts'
import { startServer, type RunningServer } from '../../runtime/server.ts'

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

/** Generates a seeded dataset and builds it, both in fresh temporary folders. */
export async function buildFixture(
  options: { jobs?: number; companies?: number; seed?: number; now?: Date } = {},
): Promise<FixtureSnapshot> {
  const root = await tempDir('fixture')
  const dataDir = path.join(root, 'data')
  const distDir = path.join(root, 'dist')
  await generateDataset({
    jobs: options.jobs ?? 600,
    companies: options.companies ?? 80,
    seed: options.seed ?? 1,
    outDir: dataDir,
  })
  const build = await buildSnapshot({
    dataDir,
    distDir,
    siteUrl: 'https://jobsnap.example',
    now: options.now ?? FIXTURE_NOW,
  })
  return { dataDir, distDir, build, cleanup: () => rm(root, { recursive: true, force: true }) }
}

export function testConfig(distDir: string, overrides: ConfigInput = {}): Config {
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

/** The repository root, where `cli.ts` lives: child processes run the real CLI from here. */
export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url))

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

export interface CliResult {
  /** Exit code, or null when a signal ended the process. */
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
}

/** Runs the real CLI (`npx tsx cli.ts ...`) from the repository root and resolves whatever the exit code. */
export function runCli(args: string[], options: { timeoutMs?: number } = {}): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      'npx',
      ['tsx', 'cli.ts', ...args],
      {
        cwd: REPO_ROOT,
        timeout: options.timeoutMs ?? 120_000,
        maxBuffer: 16 * 1024 * 1024,
        env: { ...process.env, NO_COLOR: '1' },
      },
      (error, stdout, stderr) => {
        const failure = error as (Error & { code?: number | string; signal?: NodeJS.Signals | null }) | null
        resolve({
          code: failure ? (typeof failure.code === 'number' ? failure.code : null) : 0,
          signal: failure?.signal ?? null,
          stdout: String(stdout),
          stderr: String(stderr),
        })
      },
    )
  })
}
