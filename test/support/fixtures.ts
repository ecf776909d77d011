/**
 * Shared test fixtures: a generated dataset built into a private snapshot
 * folder, and a real server on a loopback port serving it.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
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
export async function buildFixture(options: { jobs?: number; companies?: number; seed?: number; now?: Date } = {}): Promise<FixtureSnapshot> {
  const root = await tempDir('fixture')
  const dataDir = path.join(root, 'data')
  const distDir = path.join(root, 'dist')
  await generateDataset({ jobs: options.jobs ?? 600, companies: options.companies ?? 80, seed: options.seed ?? 1, outDir: dataDir })
  const build = await buildSnapshot({ dataDir, distDir, siteUrl: 'https://jobsnap.example', now: options.now ?? FIXTURE_NOW })
  return { dataDir, distDir, build, cleanup: () => rm(root, { recursive: true, force: true }) }
}

export function testConfig(distDir: string, overrides: ConfigInput = {}): Config {
  return loadConfig({}, { PORT: 0, HOST: '127.0.0.1', JOBSNAP_DIST: distDir, JOBSNAP_LOG: 'silent', ...overrides })
}

/** A real server on 127.0.0.1 with an ephemeral port and, by default, a fixed clock. */
export async function startFixtureServer(distDir: string, overrides: ConfigInput = {}, clock: () => number = () => FIXTURE_NOW.getTime()): Promise<RunningServer> {
  return startServer({ config: testConfig(distDir, overrides), clock })
}
