/**
 * Datasets and snapshots for the benchmark, kept in `.bench/` (gitignored)
 * and keyed by size and seed: `.bench/data-100k` + `.bench/dist-100k` for the
 * default seed, `.bench/data-100k-seed7` for another. A dataset is generated
 * when its marker file (`.bench/data-<key>.json`, the generator's arguments)
 * is missing or differs; a snapshot is built only when none is published (or
 * the dataset was regenerated, or `--rebuild`). The build's wall time and
 * peak RSS are recorded in `.bench/build-<key>.json` so a run that reuses the
 * snapshot can still show them, labelled as recorded.
 */
import { existsSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import path from 'node:path'
import { CURRENT_LINK, snapshotPaths, type SnapshotManifest } from '../core/snapshot.ts'
import { runToEnd } from './procs.ts'

export const DEFAULT_SEED = 100

export interface DatasetSpec {
  jobs: number
  companies: number
  seed: number
}

export interface BuildStats {
  snapshot_id: string
  wall_seconds: number
  peak_rss_mb: number | null
  live_jobs: number
  measured_at: string
}

export interface PreparedDataset {
  spec: DatasetSpec
  key: string
  dataDir: string
  distDir: string
  /** The published snapshot, symlink resolved. */
  snapshotDir: string
  manifest: SnapshotManifest
  /** The build's figures; `fresh` when this run built it. */
  build: { stats: BuildStats; fresh: boolean } | undefined
}

/** Companies for a dataset size: the ratio of the existing 100k set (5,000 companies). */
export function specFor(jobs: number, seed = DEFAULT_SEED): DatasetSpec {
  return { jobs, companies: Math.max(20, Math.round(jobs / 20)), seed }
}

export function sizeLabel(jobs: number): string {
  if (jobs >= 1_000_000 && jobs % 1_000_000 === 0) return `${jobs / 1_000_000}m`
  if (jobs >= 1000 && jobs % 1000 === 0) return `${jobs / 1000}k`
  return String(jobs)
}

function keyOf(spec: DatasetSpec): string {
  return spec.seed === DEFAULT_SEED ? sizeLabel(spec.jobs) : `${sizeLabel(spec.jobs)}-seed${spec.seed}`
}

const readJson = <T>(file: string): T | undefined => {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as T
  } catch {
    return undefined
  }
}

function publishedSnapshot(distDir: string): { dir: string; manifest: SnapshotManifest } | undefined {
  try {
    const dir = realpathSync(path.join(distDir, CURRENT_LINK))
    const manifest = readJson<SnapshotManifest>(path.join(dir, snapshotPaths.manifest))
    return manifest ? { dir, manifest } : undefined
  } catch {
    return undefined
  }
}

/** Heap for builds of more than 200k jobs, megabytes. */
export const LARGE_BUILD_HEAP_MB = 16_384

/** `node --import tsx cli.ts ...` from the repository root: one process, so its RSS is the command's. */
export function cliArgs(...args: string[]): string[] {
  return ['--import', 'tsx', 'cli.ts', ...args]
}

export async function prepareDataset(
  benchDir: string,
  repoDir: string,
  spec: DatasetSpec,
  options: { rebuild: boolean; log: (line: string) => void },
): Promise<PreparedDataset> {
  const { log } = options
  const key = keyOf(spec)
  const dataDir = path.join(benchDir, `data-${key}`)
  const distDir = path.join(benchDir, `dist-${key}`)
  const markerFile = path.join(benchDir, `data-${key}.json`)
  const statsFile = path.join(benchDir, `build-${key}.json`)

  let regenerated = false
  const marker = readJson<DatasetSpec>(markerFile)
  const sameSpec = marker?.jobs === spec.jobs && marker.companies === spec.companies && marker.seed === spec.seed
  if (!sameSpec || !existsSync(path.join(dataDir, 'jobs.ndjson'))) {
    log(`generating ${spec.jobs.toLocaleString('en-US')} jobs, ${spec.companies} companies, seed ${spec.seed} -> ${dataDir}`)
    await rm(dataDir, { recursive: true, force: true })
    rmSync(markerFile, { force: true })
    const { ms } = await runToEnd('generate', process.execPath, cliArgs('generate', '--jobs', String(spec.jobs), '--companies', String(spec.companies), '--seed', String(spec.seed), '--out', dataDir), { cwd: repoDir })
    writeFileSync(markerFile, `${JSON.stringify(spec)}\n`)
    log(`generated in ${(ms / 1000).toFixed(1)} s`)
    regenerated = true
  }

  let build: PreparedDataset['build']
  const existing = publishedSnapshot(distDir)
  if (!existing || regenerated || options.rebuild) {
    // A full build into an empty folder: an incremental build would
    // hard-link the unchanged files and measure something else.
    // The old snapshot goes first (not timed; hundreds of thousands of files
    // take minutes to delete on some disks), and asynchronously, so that
    // Ctrl-C is still answered meanwhile.
    if (existsSync(distDir)) log(`removing the previous snapshots in ${distDir}`)
    await rm(distDir, { recursive: true, force: true })
    log(`building ${dataDir} -> ${distDir} (full build; prints build time and peak RSS)`)
    // The build holds every record and its serialized v1 form at once: past V8's default heap (~4 GB) at 1M jobs.
    const heap = spec.jobs > 200_000 ? [`--max-old-space-size=${LARGE_BUILD_HEAP_MB}`] : []
    const { output, ms } = await runToEnd('build', process.execPath, [...heap, ...cliArgs('build', '--data', dataDir, '--out', distDir, '--quiet')], {
      cwd: repoDir,
      env: { ...process.env, JOBSNAP_KEEP_SNAPSHOTS: '1', JOBSNAP_LOG: 'silent' },
    })
    const published = publishedSnapshot(distDir)
    if (!published) throw new Error(`build reported success but ${distDir}/current is missing:\n${output}`)
    const peak = /peak RSS (\d+) MB/.exec(output)?.[1]
    const stats: BuildStats = {
      snapshot_id: published.manifest.snapshot_id,
      wall_seconds: Math.round(ms / 100) / 10,
      peak_rss_mb: peak === undefined ? null : Number(peak),
      live_jobs: published.manifest.counts.live_jobs,
      measured_at: new Date().toISOString(),
    }
    writeFileSync(statsFile, `${JSON.stringify(stats, null, 1)}\n`)
    log(`built snapshot ${stats.snapshot_id} in ${stats.wall_seconds} s, peak RSS ${stats.peak_rss_mb ?? '?'} MB`)
    build = { stats, fresh: true }
    return { spec, key, dataDir, distDir, snapshotDir: published.dir, manifest: published.manifest, build }
  }

  const recorded = readJson<BuildStats>(statsFile)
  if (recorded?.snapshot_id === existing.manifest.snapshot_id) build = { stats: recorded, fresh: false }
  log(`reusing snapshot ${existing.manifest.snapshot_id} in ${distDir} (${existing.manifest.counts.live_jobs.toLocaleString('en-US')} live jobs)`)
  return { spec, key, dataDir, distDir, snapshotDir: existing.dir, manifest: existing.manifest, build }
}
