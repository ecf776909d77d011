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
import {
  createReadStream,
  createWriteStream,
  existsSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { copyFile, mkdir, readdir, rm } from 'node:fs/promises'
import { createInterface } from 'node:readline'
import path from 'node:path'
import { CURRENT_LINK, SNAPSHOT_FORMAT, type SnapshotManifest, snapshotPaths } from '../core/index.ts'
import { runToEnd } from './procs.ts'

export const DEFAULT_SEED = 100

export interface DatasetSpec {
  jobs: number
  companies: number
  seed: number
}

interface BuildStats {
  snapshot_id: string
  wall_seconds: number
  peak_rss_mb: number | null
  live_jobs: number
  measured_at: string
  /** What writing the bulk exports added to the build's wall time (the build prints it); absent in older records. */
  exports_seconds?: number | null
  /** The rebuild after retitling 1% of the job records (`--rebuild` measures both). */
  change?: {
    wall_seconds: number
    peak_rss_mb: number | null
    records_changed: number
    records_reused: number | null
    files_written: number | null
    exports_seconds?: number | null
    /** Gzip members of jobs.ndjson.gz copied from the previous snapshot, and all of them. */
    export_members_copied?: number | null
    export_members?: number | null
    /** Column chunks of jobs.parquet copied from the previous snapshot, and all of them. */
    parquet_chunks_copied?: number | null
    parquet_chunks?: number | null
    /**
     * The 1% rebuild with huge pages (the one above, then once more) and without (between the two), in
     * the same run (bin/huge-pages.mjs).
     */
    huge_pages?: { with: BuildCpu[]; without: BuildCpu }
  }
}

interface BuildCpu {
  wall_seconds: number
  user_seconds: number | null
  system_seconds: number | null
  peak_rss_mb: number | null
}

/** The seconds the build says its bulk exports took on its own thread, from its output. */
function exportsSeconds(output: string): number | null {
  const ms = /exports: (\d+) ms/.exec(output)?.[1]
  return ms === undefined ? null : Number(ms) / 1000
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

/**
 * `node bin/jobsnap.mjs ...` from the repository root: the command as `npm run build` and `npx jobsnap` run it
 * (a build reruns itself with huge pages there: bin/huge-pages.mjs). A build prints its own peak RSS, which is
 * what the bench reports of it.
 */
export function cliArgs(...args: string[]): string[] {
  return ['bin/jobsnap.mjs', ...args]
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
    log(
      `generating ${spec.jobs.toLocaleString('en-US')} jobs, ${spec.companies} companies, seed ${spec.seed} -> ${dataDir}`,
    )
    await rm(dataDir, { recursive: true, force: true })
    rmSync(markerFile, { force: true })
    const { ms } = await runToEnd(
      'generate',
      process.execPath,
      cliArgs(
        'generate',
        '--jobs',
        String(spec.jobs),
        '--companies',
        String(spec.companies),
        '--seed',
        String(spec.seed),
        '--out',
        dataDir,
      ),
      { cwd: repoDir },
    )
    writeFileSync(markerFile, `${JSON.stringify(spec)}\n`)
    log(`generated in ${(ms / 1000).toFixed(1)} s`)
    regenerated = true
  }

  let build: PreparedDataset['build']
  const published = publishedSnapshot(distDir)
  // A snapshot of an older format would be refused by the server: built again.
  const existing = published?.manifest.format === SNAPSHOT_FORMAT ? published : undefined
  if (!existing || regenerated || options.rebuild) {
    // A full build into an empty folder: an incremental build would
    // hard-link the unchanged files and measure something else.
    // The old snapshot goes first (not timed; hundreds of thousands of files
    // take minutes to delete on some disks), and asynchronously, so that
    // Ctrl-C is still answered meanwhile.
    if (existsSync(distDir)) log(`removing the previous snapshots in ${distDir}`)
    await rm(distDir, { recursive: true, force: true })
    log(`building ${dataDir} -> ${distDir} (full build; prints build time and peak RSS)`)
    // Node's default heap, as the data team runs it.
    const full = await timedBuild(repoDir, dataDir, distDir)
    let published = publishedSnapshot(distDir)
    if (!published) throw new Error(`build reported success but ${distDir}/current is missing:\n${full.output}`)
    log(
      `built snapshot ${published.manifest.snapshot_id} in ${full.wallSeconds} s, peak RSS ${full.peakRssMb ?? '?'} MB`,
    )
    const stats: BuildStats = {
      snapshot_id: published.manifest.snapshot_id,
      wall_seconds: full.wallSeconds,
      peak_rss_mb: full.peakRssMb,
      live_jobs: published.manifest.counts.live_jobs,
      measured_at: new Date().toISOString(),
      exports_seconds: exportsSeconds(full.output),
    }
    if (options.rebuild) {
      // The refresh the data team runs most: the same dataset with 1% of its jobs retitled, built over the last snapshot.
      const changedDir = `${dataDir}-retitled`
      const recordsChanged = await retitledCopy(dataDir, changedDir, RETITLE_EVERY)
      log(`rebuilding with ${recordsChanged.toLocaleString('en-US')} job records retitled (${changedDir})`)
      const change = await timedBuild(repoDir, changedDir, distDir)
      published = publishedSnapshot(distDir)
      if (!published) throw new Error(`rebuild reported success but ${distDir}/current is missing:\n${change.output}`)
      const counted = (pattern: RegExp) => {
        const found = pattern.exec(change.output)?.[1]
        return found === undefined ? null : Number(found)
      }
      stats.snapshot_id = published.manifest.snapshot_id
      stats.change = {
        wall_seconds: change.wallSeconds,
        peak_rss_mb: change.peakRssMb,
        records_changed: recordsChanged,
        records_reused: counted(/(\d+) of \d+ job records reused/),
        files_written: counted(/\((\d+) written/),
        exports_seconds: exportsSeconds(change.output),
        export_members_copied: counted(/(\d+) of \d+ gzip members/),
        export_members: counted(/\d+ of (\d+) gzip members/),
        parquet_chunks_copied: counted(/(\d+) of \d+ column chunks/),
        parquet_chunks: counted(/\d+ of (\d+) column chunks/),
      }
      log(
        `rebuilt in ${change.wallSeconds} s (${stats.change.records_reused ?? '?'} records reused, ${stats.change.files_written ?? '?'} files written), peak RSS ${change.peakRssMb ?? '?'} MB`,
      )
      // What huge pages change (bin/huge-pages.mjs), in this run: a 1% rebuild without them (back to the original
      // records), then the same rebuild as above with them again, so each figure has a neighbour to compare with.
      log('the same 1% rebuild without huge pages, then with them again')
      const without = await timedBuild(repoDir, dataDir, distDir, { JOBSNAP_HUGE_PAGES: 'false' })
      const again = await timedBuild(repoDir, changedDir, distDir)
      published = publishedSnapshot(distDir)
      if (!published) throw new Error(`rebuild reported success but ${distDir}/current is missing:\n${again.output}`)
      stats.snapshot_id = published.manifest.snapshot_id
      const cpu = (build: TimedBuild) => ({
        wall_seconds: build.wallSeconds,
        user_seconds: build.userSeconds,
        system_seconds: build.systemSeconds,
        peak_rss_mb: build.peakRssMb,
      })
      stats.change.huge_pages = { with: [cpu(change), cpu(again)], without: cpu(without) }
    }
    writeFileSync(statsFile, `${JSON.stringify(stats, null, 1)}\n`)
    build = { stats, fresh: true }
    return { spec, key, dataDir, distDir, snapshotDir: published.dir, manifest: published.manifest, build }
  }

  const recorded = readJson<BuildStats>(statsFile)
  if (recorded?.snapshot_id === existing.manifest.snapshot_id) build = { stats: recorded, fresh: false }
  log(
    `reusing snapshot ${existing.manifest.snapshot_id} in ${distDir} (${existing.manifest.counts.live_jobs.toLocaleString('en-US')} live jobs)`,
  )
  return { spec, key, dataDir, distDir, snapshotDir: existing.dir, manifest: existing.manifest, build }
}

/** One job record in this many is retitled for the incremental build: 1%. */
const RETITLE_EVERY = 100

/**
 * Waits until no snapshot pruned by an earlier build is still being deleted under `distDir`
 * (`snapshots/.pruned-*`, removed by a background `rm -rf` after the build that pruned it returns);
 * returns the seconds waited. A timed build that starts while ~1M files of an older snapshot go
 * shares the machine's disk and CPU with that deletion: the previous build's cost, not its own,
 * and a refresh in production starts long after the last one's prune has finished.
 */
export async function settledDist(distDir: string, timeoutMs = 600_000): Promise<number> {
  const started = performance.now()
  const snapshots = path.join(distDir, 'snapshots')
  for (;;) {
    const pruning = (await readdir(snapshots).catch(() => [] as string[])).some((name) => name.startsWith('.pruned-'))
    if (!pruning) return Math.round((performance.now() - started) / 100) / 10
    if (performance.now() - started > timeoutMs)
      throw new Error(`${snapshots}: a pruned snapshot is still being deleted after ${timeoutMs / 1000} s`)
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
}

interface TimedBuild {
  wallSeconds: number
  peakRssMb: number | null
  /** CPU seconds of the build process, all its threads (the build prints them). */
  userSeconds: number | null
  systemSeconds: number | null
  output: string
}

/** One build in its own process, quiet, keeping one snapshot: its wall time, peak RSS, CPU and output. */
async function timedBuild(
  repoDir: string,
  dataDir: string,
  distDir: string,
  env: NodeJS.ProcessEnv = {},
): Promise<TimedBuild> {
  await settledDist(distDir)
  const { output, ms } = await runToEnd(
    'build',
    process.execPath,
    cliArgs('build', '--data', dataDir, '--out', distDir, '--quiet'),
    {
      cwd: repoDir,
      env: { ...process.env, JOBSNAP_KEEP_SNAPSHOTS: '1', JOBSNAP_LOG: 'silent', ...env },
    },
  )
  const figure = (pattern: RegExp) => {
    const found = pattern.exec(output)?.[1]
    return found === undefined ? null : Number(found)
  }
  return {
    wallSeconds: Math.round(ms / 100) / 10,
    peakRssMb: figure(/peak RSS (\d+) MB/),
    userSeconds: figure(/CPU ([\d.]+) s user/),
    systemSeconds: figure(/([\d.]+) s system/),
    output,
  }
}

/**
 * Copies a generated dataset with every `every`-th job record retitled (its
 * title gains " (Remote-first)"), the other records byte for byte; returns how
 * many were changed.
 */
async function retitledCopy(dataDir: string, outDir: string, every: number): Promise<number> {
  await rm(outDir, { recursive: true, force: true })
  await mkdir(outDir, { recursive: true })
  let changed = 0
  for (const name of await readdir(dataDir)) {
    if (name !== 'jobs.ndjson') {
      await copyFile(path.join(dataDir, name), path.join(outDir, name))
      continue
    }
    const out = createWriteStream(path.join(outDir, name))
    let index = 0
    for await (const line of createInterface({
      input: createReadStream(path.join(dataDir, name), 'utf8'),
      crlfDelay: Infinity,
    })) {
      let text = line
      if (line !== '' && index++ % every === 0) {
        const job = JSON.parse(line) as { title: string }
        job.title = `${job.title} (Remote-first)`
        text = JSON.stringify(job)
        changed++
      }
      if (!out.write(`${text}\n`)) await new Promise<void>((resolve) => out.once('drain', () => resolve()))
    }
    await new Promise<void>((resolve, reject) => out.end((error?: Error | null) => (error ? reject(error) : resolve())))
  }
  return changed
}
