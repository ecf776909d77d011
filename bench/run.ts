/**
 * `npm run bench`: jobsnap against its references, side by side, on the
 * same snapshot files, in one run, printed as a markdown table (also written
 * to `.bench/last-run.md`).
 *
 *   npm run bench                 100k jobs, 10 s per scenario
 *   npm run bench -- --quick      3k jobs, 2 s per scenario (what CI runs: it checks the script runs, never its numbers)
 *   npm run bench -- --large      also 1M jobs (slow: build, disk, memory; not for CI)
 *   npm run bench -- --soak       10 minutes of mixed load at 100k under faults (bench/soak.ts)
 *   npm run bench -- --cdn        100k jobs behind deploy/varnish.vcl: hit ratio, origin load, a 1% rebuild with
 *                                 purge against the 60 s lifetime alone, an origin outage (bench/cdn.ts; --quick: 3k)
 *   npm run bench -- --rebuild    rebuild the snapshot to measure build time and peak RSS now: a full build,
 *                                 then one after retitling 1% of the job records (the build cache at work)
 *   npm run bench -- --rebuild --builds-only    just those builds, no servers (with --large: at 100k and 1M)
 *   npx tsx bench/memory.ts .bench/dist-1m [--workers 2] [--evict]   only start-up and memory (e.g. at 1M,
 *                                 once --large --rebuild --builds-only has built .bench/dist-1m)
 *   options: --seconds N, --connections N, --mcp-clients N, --seed N
 *
 * Steps per dataset: generate it (or reuse `.bench/data-<size>`), build it
 * (or reuse `.bench/dist-<size>`), start jobsnap (production settings,
 * limits raised) and time it to its first 200 on /health, start nginx and
 * json-server on the same snapshot, then load each scenario with autocannon
 * (keep-alive, fixed connections and duration, loopback) or the MCP SDK
 * client, warm-up first. Then the wrk half (bench/wrk-section.ts): the same
 * scenarios under wrk, beside bare node:http and bare h3 floors, with and
 * without `Accept-Encoding: gzip, br`, and jobsnap again with `--workers 2`.
 * Load generator and servers share this machine's cores: the numbers
 * compare servers under the same handicap, they are not absolute capacities.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { DEFAULT_SEED, prepareDataset, sizeLabel, specFor, type PreparedDataset } from './datasets.ts'
import { runLoad, type LoadResult } from './load.ts'
import { measureFacetCost } from './facet-cost.ts'
import { describeRefresh, measureRefresh } from './refresh.ts'
import { runMcpLoad, toolsListBytes } from './mcp-load.ts'
import { findWrk, WRK_INSTALL } from './wrk.ts'
import { runWrkSection } from './wrk-section.ts'
import { cpuSecondsOf, installExitHooks, killAll, onCleanup, probe, removeOnDeath, stopChild } from './procs.ts'
import {
  atLeast,
  atMost,
  contextLines,
  formatMs,
  GENERATOR_BOUND,
  ratioOf,
  renderReport,
  runContext,
  type ScenarioRow,
  type SectionFacts,
  type Target,
} from './report.ts'
import {
  describeMemory,
  evictPackedFiles,
  jsonServerDb,
  memoryFigures,
  rssOf,
  startJobsnap,
  startJsonServer,
  startNginx,
  type Optional,
  type RunningServer,
  warmPackedFiles,
} from './servers.ts'
import {
  CACHED_QUERY,
  jobsnapListPath,
  jsonServerListPath,
  loadVocabulary,
  mcpSearchArgs,
  pick,
  prng,
  randomListQuery,
  WORST_QUERY,
  worstQueryVariant,
  type ListQuery,
  type Vocabulary,
} from './workload.ts'
import { isCompressedCopy } from '../core/index.ts'
import { runSoak } from './soak.ts'
import { runCdn } from './cdn.ts'
import { measureExports } from './exports.ts'

const { values: flags } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    large: { type: 'boolean', default: false },
    rebuild: { type: 'boolean', default: false },
    'builds-only': { type: 'boolean', default: false },
    soak: { type: 'boolean', default: false },
    cdn: { type: 'boolean', default: false },
    'soak-seconds': { type: 'string' },
    seconds: { type: 'string' },
    connections: { type: 'string' },
    'mcp-clients': { type: 'string' },
    seed: { type: 'string' },
    help: { type: 'boolean', short: 'h', default: false },
  },
})

if (flags.help) {
  console.log(
    `npm run bench [-- --quick | --large] [--rebuild] [--builds-only] [--seconds N] [--connections N] [--mcp-clients N] [--seed N]\n` +
      `npm run bench -- --soak [--quick] [--soak-seconds N]   (faults under load: 100k jobs, 600 s; --quick: 3k, 60 s)\n` +
      `npm run bench -- --cdn [--quick]   (behind Varnish: 100k jobs, minute-long windows; --quick: 3k, 10 s windows)\n` +
      `npx tsx bench/memory.ts .bench/dist-1m [--workers 2] [--evict]   (only start-up and memory, e.g. at 1M once --large --rebuild --builds-only built it)`,
  )
  process.exit(0)
}

const positiveInt = (raw: string | undefined, fallback: number, name: string): number => {
  if (raw === undefined) return fallback
  const n = Number(raw)
  if (!Number.isSafeInteger(n) || n < 1) {
    console.error(`--${name} must be a whole number of at least 1; got ${raw}`)
    process.exit(2)
  }
  return n
}

const QUICK_JOBS = 3_000
const FULL_JOBS = 100_000
const LARGE_JOBS = 1_000_000
/** wrk's connections: the uncached mix's targets (docs/performance.md) are for 8. */
const WRK_CONNECTIONS = 8
/** json-server holds its whole database as one JS object; past this it is not worth the memory. */
const JSON_SERVER_MAX_JOBS = 200_000

const settings = {
  seconds: positiveInt(flags.seconds, flags.quick ? 2 : 10, 'seconds'),
  warmupSeconds: flags.quick ? 0.5 : 2,
  connections: positiveInt(flags.connections, 10, 'connections'),
  mcpClients: positiveInt(flags['mcp-clients'], 8, 'mcp-clients'),
  seed: flags.seed === undefined ? DEFAULT_SEED : positiveInt(flags.seed, DEFAULT_SEED, 'seed'),
}
const sizes = flags.quick ? [QUICK_JOBS] : flags.large ? [FULL_JOBS, LARGE_JOBS] : [FULL_JOBS]

const repoDir = path.resolve(import.meta.dirname, '..')
const benchDir = path.join(repoDir, '.bench')
const began = performance.now()
const log = (line: string) =>
  process.stderr.write(`[bench ${((performance.now() - began) / 1000).toFixed(0).padStart(4)} s] ${line}\n`)

// ---------- scenarios (targets are printed, never asserted) ----------

type PathGen = (random: () => number) => () => string

interface Servers {
  jobsnap: RunningServer
  nginx: Optional<RunningServer>
  jsonServer: Optional<RunningServer>
}

/** Waits until a server answers a trivial request: whatever it still had queued from the last run is done. */
async function drain(server: RunningServer): Promise<void> {
  await probe(server.port, '/__bench_drain', 300_000)
}

/** Runs `load` and records the CPU the server (and its children) and this process used meanwhile. */
async function withCpu(server: RunningServer, load: () => Promise<LoadResult>): Promise<LoadResult> {
  const server0 = cpuSecondsOf(server.child.pid)
  const self0 = process.cpuUsage()
  const t0 = performance.now()
  const result = await load()
  const wall = (performance.now() - t0) / 1000
  const self = process.cpuUsage(self0)
  result.cpu = {
    server: (cpuSecondsOf(server.child.pid) - server0) / wall,
    generator: (self.user + self.system) / 1e6 / wall,
  }
  return result
}

/**
 * Warm-up, then the measured run. json-server is warmed with one request
 * only: its requests take up to seconds at 100k jobs, so a timed warm-up
 * would leave a queue for the drain and teach its JIT nothing more.
 */
async function measure(
  server: RunningServer,
  makePath: PathGen,
  seed: number,
  connections: number,
): Promise<LoadResult> {
  const warmupPath = makePath(prng(seed + 1_000_003))
  if (server.name === 'json-server') await probe(server.port, warmupPath(), 300_000)
  else if (settings.warmupSeconds > 0) {
    await runLoad({ port: server.port, nextPath: warmupPath, connections, seconds: settings.warmupSeconds })
    await drain(server)
  }
  const result = await withCpu(server, () =>
    runLoad({ port: server.port, nextPath: makePath(prng(seed)), connections, seconds: settings.seconds }),
  )
  await drain(server)
  return result
}

const percent = (cores: number) => `${Math.round(cores * 100)}%`

function describe(result: LoadResult): string {
  const odd = Object.entries(result.statuses)
  return `${formatMs(result.rps)} req/s, p50 ${formatMs(result.p50)} ms, p99 ${formatMs(result.p99)} ms, max ${formatMs(result.max)} ms, ${result.errors} errors${odd.length ? ` (${odd.map(([k, v]) => `${k}: ${v}`).join(', ')})` : ''}${result.cpu ? `; CPU: server ${percent(result.cpu.server)}, load generator ${percent(result.cpu.generator)}` : ''}`
}

interface HttpScenario {
  name: string
  /** Paths for jobsnap, and the reference server with its paths for the same scenario. */
  jobsnap: PathGen
  reference: { server: 'nginx' | 'jsonServer'; path: PathGen }
  connections?: number
  targets: (row: ScenarioRow) => Target[]
}

function httpScenarios(vocabulary: Vocabulary, jobs: number): HttpScenario[] {
  const at100k = jobs >= FULL_JOBS ? '' : ' (at 100k)'
  const slugPath: PathGen = (random) => () => `/api/v2/jobs/${pick(random, vocabulary.slugs)}`
  const v1Path: PathGen = (random) => () => `/api/v1?page=${1 + Math.floor(random() * vocabulary.v1Pages)}`
  const listGen =
    (render: (query: ListQuery) => string): PathGen =>
    (random) =>
    () =>
      render(randomListQuery(random, vocabulary))
  const worstGen =
    (render: (query: ListQuery) => string): PathGen =>
    (random) =>
    () =>
      render(worstQueryVariant(random))
  const fixed =
    (path: string): PathGen =>
    () =>
    () =>
      path
  return [
    {
      name: 'single job by slug (random slugs)',
      jobsnap: slugPath,
      reference: { server: 'nginx', path: slugPath },
      targets: (row) => [atLeast(ratioOf(row), 0.5, '≥ 0.5× nginx')],
    },
    {
      name: 'v1 page (random pages, limit 25)',
      jobsnap: v1Path,
      reference: { server: 'nginx', path: v1Path },
      targets: (row) => [atLeast(ratioOf(row), 0.5, '≥ 0.5× nginx')],
    },
    {
      name: 'v2 list, cached (one repeated query)',
      jobsnap: fixed(jobsnapListPath(CACHED_QUERY)),
      reference: { server: 'jsonServer', path: fixed(jsonServerListPath(CACHED_QUERY)) },
      targets: () => [],
    },
    {
      name: 'v2 list, uncached (random filter mix)',
      jobsnap: listGen(jobsnapListPath),
      reference: { server: 'jsonServer', path: listGen((query) => jsonServerListPath(query)) },
      targets: (row) => [
        atLeast(ratioOf(row), 100, '≥ 100× json-server'),
        // The target, p99 ≤ 10 ms, holds at 100k and 1M (as the wrk half prints it).
        atMost(row.result?.p99, 10, `p99 ≤ 10 ms${at100k}`),
      ],
    },
    {
      name: 'v2 worst query (WORST_QUERY, 1 connection)',
      jobsnap: worstGen(jobsnapListPath),
      reference: { server: 'jsonServer', path: worstGen((query) => jsonServerListPath(query)) },
      connections: 1,
      targets: (row) => {
        const limit = jobs > FULL_JOBS ? 25 : 50
        return [atMost(row.result?.max, limit, `no query above ${limit} ms (max ${formatMs(row.result?.max)} ms)`)]
      },
    },
  ]
}

// ---------- one dataset ----------

/** What the build of this dataset cost (full, then after a 1% change when `--rebuild` measured it). */
function buildLines(jobs: number, dataset: PreparedDataset): string[] {
  const build = dataset.build
  const lines: string[] = []
  const at100k = jobs === FULL_JOBS
  const label = sizeLabel(jobs)
  if (build) {
    const when = build.fresh
      ? 'measured in this run'
      : `recorded ${build.stats.measured_at} when this snapshot was built (--rebuild measures it again)`
    const large = jobs >= 1_000_000
    const fullTarget: Target = large
      ? atMost(build.stats.wall_seconds, 300, 'target ≤ 5 min')
      : atMost(build.stats.wall_seconds, 30, 'target ≤ 30 s')
    const rssTarget: Target = atMost(build.stats.peak_rss_mb ?? undefined, 4096, 'target ≤ 4 GB')
    const verdict = (target: Target) =>
      `${target.text}: ${target.met === undefined ? 'unknown' : target.met ? 'met' : 'MISSED'}`
    const targeted = at100k || large
    lines.push(
      `Build (full, ${label} job records, Node's default heap): ${build.stats.wall_seconds.toFixed(1)} s wall, peak RSS ${build.stats.peak_rss_mb ?? '?'} MB of the build process${targeted ? `; ${verdict(fullTarget)}${large ? `; ${verdict(rssTarget)}` : ''}` : '; targets are for 100k and 1M'}; ${when}.`,
    )
    const change = build.stats.change
    if (change) {
      const share = change.wall_seconds / build.stats.wall_seconds
      const changeTarget: Target = large
        ? atMost(change.wall_seconds, 60, 'target ≤ 60 s')
        : atMost(share * 100, 10, 'target ≤ 10% of the full build')
      lines.push(
        `Build after retitling ${change.records_changed.toLocaleString('en-US')} job records (1%), over the full build's snapshot: ${change.wall_seconds.toFixed(1)} s wall = ${(share * 100).toFixed(0)}% of the full build, peak RSS ${change.peak_rss_mb ?? '?'} MB; ${change.records_reused?.toLocaleString('en-US') ?? '?'} records reused from the build cache, ${change.files_written?.toLocaleString('en-US') ?? '?'} public files written (the rest hard-linked, or left in the job files' base layer)${targeted ? `; ${verdict(changeTarget)}` : ''}; ${when}.`,
      )
      const huge = change.huge_pages
      if (huge) {
        const figures = (build: (typeof huge.with)[number]) =>
          `${build.wall_seconds.toFixed(1)} s wall, CPU ${build.user_seconds?.toFixed(1) ?? '?'} s user + ${build.system_seconds?.toFixed(1) ?? '?'} s system, peak RSS ${build.peak_rss_mb ?? '?'} MB`
        lines.push(
          `Huge pages for the build's buffers (\`JOBSNAP_HUGE_PAGES\`, on by default), three 1% rebuilds in a row (the records retitled, back, retitled again): with them ${figures(huge.with[0]!)} (the one above, over the full build's snapshot); without them ${figures(huge.without)}; with them again ${huge.with[1] ? figures(huge.with[1]) : '?'} (these two over a rebuild's snapshot, like each other: the pair to compare); ${when}.`,
        )
      }
    } else {
      lines.push(
        "Build after a 1% change: not measured in this snapshot's run (`npm run bench -- --rebuild` measures it).",
      )
    }
    lines.push(exportsBuildLine(build.stats, large))
  } else {
    lines.push(
      `Build: not measured: this snapshot was built outside the bench; run \`npm run bench -- --rebuild\` to measure a full build.`,
    )
  }
  return lines
}

/**
 * What the bulk exports cost the builds: the time the build's own thread spent on them (waits for the
 * exports thread included), as a share of the full build and in seconds of the 1% rebuild.
 */
function exportsBuildLine(stats: NonNullable<PreparedDataset['build']>['stats'], large: boolean): string {
  const full = stats.exports_seconds
  if (full === undefined || full === null) return 'Bulk exports in the build: not measured (an older build record).'
  // Added to what the build would take without them.
  const share = full / Math.max(0.001, stats.wall_seconds - full)
  const fullTarget = atMost(share * 100, 15, 'target ≤ +15% of a full build')
  const change = stats.change
  const changeTarget = atMost(change?.exports_seconds ?? undefined, 10, 'target ≤ 10 s at 1M')
  const verdict = (target: Target) =>
    `${target.text}: ${target.met === undefined ? 'unknown' : target.met ? 'met' : 'MISSED'}`
  const rebuild = change
    ? `; in the 1% rebuild ${change.exports_seconds?.toFixed(1) ?? '?'} s (${change.export_members_copied?.toLocaleString('en-US') ?? '?'} of ${change.export_members?.toLocaleString('en-US') ?? '?'} gzip members of jobs.ndjson.gz and ${change.parquet_chunks_copied?.toLocaleString('en-US') ?? '?'} of ${change.parquet_chunks?.toLocaleString('en-US') ?? '?'} column chunks of jobs.parquet copied from the previous files)${large ? `; ${verdict(changeTarget)}` : ' (the 10 s target is for 1M)'}`
    : ''
  return `Bulk exports in the build (time on the build's own thread, waits for its exports thread included): ${full.toFixed(1)} s of the full build = +${(share * 100).toFixed(0)}%${large ? `; ${verdict(fullTarget)}` : ` (${verdict(fullTarget)}; the targets are for 1M)`}${rebuild}.`
}

/** Reads every identity file the HTTP scenarios serve (v2 jobs, v1 pages of 25) and the index files once. */
function warmPageCache(snapshotDir: string): { files: number; bytes: number; ms: number } {
  const t0 = performance.now()
  let files = 0
  let bytes = 0
  // v2/base: a snapshot whose job files are a delta over another's (core/job-layers.ts) serves the rest from there.
  for (const dir of ['v2/jobs', 'v2/base', 'v1/25', 'index']) {
    const full = path.join(snapshotDir, dir)
    if (dir === 'v2/base' && !existsSync(full)) continue
    for (const name of readdirSync(full)) {
      if (isCompressedCopy(name)) continue
      bytes += readFileSync(path.join(full, name)).length
      files++
    }
  }
  return { files, bytes, ms: performance.now() - t0 }
}

/**
 * With --rebuild, refresh to live: the dataset as generated built over the
 * 1% rebuild's snapshot (1% of records changed back), under a running
 * `--workers 2` server, timed to every worker serving it.
 */
async function refreshLines(dataset: PreparedDataset): Promise<string[]> {
  if (!flags.rebuild) return []
  const result = await measureRefresh({
    repoDir,
    distDir: dataset.distDir,
    dataDir: dataset.dataDir,
    workers: 2,
    log,
  })
  log(`  ${describeRefresh(result)}`)
  return [describeRefresh(result)]
}

async function benchDataset(jobs: number, workDir: string, missing: Set<string>): Promise<SectionFacts> {
  const spec = specFor(jobs, settings.seed)
  const dataset: PreparedDataset = await prepareDataset(benchDir, repoDir, spec, { rebuild: flags.rebuild, log })
  const { manifest } = dataset
  const label = sizeLabel(jobs)
  const title = `${label} jobs (${manifest.counts.live_jobs.toLocaleString('en-US')} live, ${manifest.counts.companies.toLocaleString('en-US')} companies, seed ${spec.seed}), snapshot ${manifest.snapshot_id}`
  if (flags['builds-only'])
    return { title, rows: [], lines: [...buildLines(jobs, dataset), ...(await refreshLines(dataset))] }
  log(`sampling slugs and filter values from ${dataset.snapshotDir}`)
  const vocabulary = loadVocabulary(dataset.snapshotDir)

  let dbFile: string | undefined
  let jsonServerSkip: string | undefined
  if (jobs > JSON_SERVER_MAX_JOBS)
    jsonServerSkip = `skipped above ${JSON_SERVER_MAX_JOBS.toLocaleString('en-US')} jobs (json-server keeps its whole database in one JS object)`
  else {
    log(`json-server database: the ${vocabulary.slugs.length.toLocaleString('en-US')} v2 jobs of the snapshot`)
    dbFile = jsonServerDb(benchDir, dataset.key, dataset.snapshotDir, manifest.snapshot_id, vocabulary.slugs)
  }

  // Both servers read these files; whichever ran first would otherwise also measure the disk.
  log('reading the served files once, so they are in the OS page cache for every server')
  const warmed = warmPageCache(dataset.snapshotDir)
  log(
    `  ${warmed.files.toLocaleString('en-US')} files, ${(warmed.bytes / 1e6).toFixed(0)} MB in ${(warmed.ms / 1000).toFixed(1)} s`,
  )

  // jobsnap first and alone, so its ready time is its own.
  log('starting jobsnap')
  // Started with its packed files out of the page cache, so the page cache it counts when ready is what it read.
  evictPackedFiles(dataset.distDir)
  const jobsnap = await startJobsnap(repoDir, dataset.distDir, jobs > FULL_JOBS ? 900_000 : 180_000)
  const rssReady = rssOf(jobsnap)
  const memoryReady = memoryFigures(jobsnap, dataset.distDir)
  const rewarmed = warmPackedFiles(dataset.distDir)
  log(`  read its packed files again after counting: ${(rewarmed / 1e6).toFixed(0)} MB`)
  log(
    `jobsnap ready in ${(jobsnap.readyMs / 1000).toFixed(2)} s on port ${jobsnap.port}, RSS ${rssReady?.rssMb.toFixed(0) ?? '?'} MB`,
  )

  log('bulk exports: one download of jobs.ndjson.gz, one Parquet query over HTTP')
  const exportLines = await measureExports(`http://127.0.0.1:${jobsnap.port}`)
  for (const line of exportLines) log(`  ${line}`)

  log('starting nginx and json-server')
  const nginx = await startNginx(dataset.snapshotDir, workDir)
  if (!nginx.ok) {
    missing.add(nginx.reason)
    log(nginx.reason)
  }
  const jsonServer: Optional<RunningServer> = dbFile
    ? await startJsonServer(repoDir, dbFile, workDir)
    : { ok: false, reason: jsonServerSkip ?? 'skipped' }
  if (!jsonServer.ok) {
    if (dbFile) missing.add(jsonServer.reason)
    log(jsonServer.reason)
  } else log(`json-server ready in ${(jsonServer.server.readyMs / 1000).toFixed(1)} s`)
  const servers: Servers = { jobsnap, nginx, jsonServer }

  const rows: ScenarioRow[] = []
  const wrkLines: string[] = []
  let seed = 1
  for (const scenario of httpScenarios(vocabulary, jobs)) {
    seed++
    const connections = scenario.connections ?? settings.connections
    log(`${scenario.name}: jobsnap`)
    const mine = await measure(jobsnap, scenario.jobsnap, seed, connections)
    log(`  ${describe(mine)}`)
    const refServer = servers[scenario.reference.server]
    const refName = scenario.reference.server === 'nginx' ? 'nginx' : 'json-server'
    let theirs: LoadResult | undefined
    if (refServer.ok) {
      log(`${scenario.name}: ${refName}`)
      theirs = await measure(refServer.server, scenario.reference.path, seed, connections)
      log(`  ${describe(theirs)}`)
    }
    const row: ScenarioRow = {
      scenario: scenario.name,
      server: 'jobsnap',
      result: mine,
      reference: { name: refName, result: theirs, skipped: refServer.ok ? undefined : refServer.reason },
      targets: [],
    }
    row.targets = scenario.targets(row)
    rows.push(row)
    rows.push(
      theirs
        ? { scenario: scenario.name, server: refName, result: theirs, targets: [], isReference: true }
        : {
            scenario: scenario.name,
            server: refName,
            skipped: refServer.ok ? '?' : refServer.reason.split(';')[0]!,
            targets: [],
            isReference: true,
          },
    )
  }

  // MCP through the SDK client.
  const mcpRuns: {
    name: string
    tool: string
    args: (random: () => number) => () => Record<string, unknown>
    targets: (r: LoadResult) => Target[]
  }[] = [
    {
      name: 'MCP search_jobs (random filters)',
      tool: 'search_jobs',
      args: (random) => () => mcpSearchArgs(randomListQuery(random, vocabulary), vocabulary),
      targets: (r) => [atLeast(r.rps, 1000, '≥ 1,000 calls/s')],
    },
    {
      name: 'MCP get_job (random slugs)',
      tool: 'get_job',
      args: (random) => () => ({ slug: pick(random, vocabulary.slugs) }),
      targets: () => [],
    },
  ]
  for (const run of mcpRuns) {
    seed++
    log(`${run.name}: ${settings.mcpClients} SDK clients`)
    if (settings.warmupSeconds > 0)
      await runMcpLoad({
        port: jobsnap.port,
        clients: settings.mcpClients,
        seconds: settings.warmupSeconds,
        tool: run.tool,
        nextArgs: run.args(prng(seed + 1_000_003)),
      })
    const result = await withCpu(jobsnap, () =>
      runMcpLoad({
        port: jobsnap.port,
        clients: settings.mcpClients,
        seconds: settings.seconds,
        tool: run.tool,
        nextArgs: run.args(prng(seed)),
      }),
    )
    log(`  ${describe(result).replace('req/s', 'calls/s')}`)
    rows.push({
      scenario: run.name,
      server: `jobsnap (${settings.mcpClients} MCP clients; calls/s)`,
      result,
      targets: run.targets(result),
    })
  }

  log('facet cost: plain and faceted uncached lists, paired')
  const facetCost = await measureFacetCost({ port: jobsnap.port, vocabulary, seed: 9_000_001 })
  const toolList = await toolsListBytes(jobsnap.port)
  const rssAfter = rssOf(jobsnap)

  const wrk = findWrk()
  if (!wrk)
    missing.add(
      `wrk not found, so the wrk half (floor references, every core) did not run; install it with: ${WRK_INSTALL}`,
    )
  else {
    const section = await runWrkSection({
      wrk,
      repoDir,
      distDir: dataset.distDir,
      snapshotDir: dataset.snapshotDir,
      workDir,
      vocabulary,
      jobs,
      jobsnap,
      nginx: nginx.ok ? nginx.server : undefined,
      seconds: settings.seconds,
      warmupSeconds: settings.warmupSeconds,
      connections: WRK_CONNECTIONS,
      mcpClients: settings.mcpClients,
      readyTimeoutMs: jobs > FULL_JOBS ? 900_000 : 180_000,
      log,
    })
    rows.push(...section.rows)
    wrkLines.push(...section.lines)
  }

  for (const server of [jobsnap, nginx.ok ? nginx.server : undefined, jsonServer.ok ? jsonServer.server : undefined])
    if (server) await stopChild(server.child)

  const at100k = jobs === FULL_JOBS
  const lines: string[] = [...wrkLines]
  lines.push(...buildLines(jobs, dataset))
  lines.push(...exportLines)
  const facetTarget = atMost(facetCost.addedMedianMs, 5, 'target ≤ 5 ms added')
  lines.push(
    `Facets (all seven) on an uncached v2 list, one request at a time, ${facetCost.pairs} random queries each asked plain and faceted: +${facetCost.addedMedianMs.toFixed(2)} ms at the median, +${facetCost.addedP95Ms.toFixed(2)} ms at p95 (plain: ${facetCost.plainMedianMs.toFixed(2)} ms median, a fresh connection each); ${at100k ? `${facetTarget.text}: ${facetTarget.met ? 'met' : 'MISSED'}` : 'target (≤ 5 ms added) is for 100k'}.`,
  )
  lines.push(
    `MCP tools/list: ${toolList.toLocaleString('en-US')} bytes of compact JSON (target ≤ 10 KB, 10,240 bytes: ${toolList <= 10_240 ? 'met' : 'MISSED'}).`,
  )
  const ready = atMost(jobsnap.readyMs / 1000, 3, 'target ≤ 3 s')
  lines.push(
    `jobsnap ready (spawn to first 200 on /health): ${(jobsnap.readyMs / 1000).toFixed(2)} s; ${at100k ? `${ready.text}: ${ready.met ? 'met' : 'MISSED'}` : 'target (≤ 3 s) is for 100k'}.`,
  )
  // The RSS target goes with readiness (ready in at most 3 s with RSS at most 600 MB); after load is shown too.
  const rss = atMost(rssReady?.rssMb, 600, 'target ≤ 600 MB when ready')
  lines.push(
    `jobsnap RSS: ${rssReady ? `${rssReady.rssMb.toFixed(0)} MB when ready` : 'unknown (no /proc)'}, ${rssAfter ? `${rssAfter.rssMb.toFixed(0)} MB after load (peak ${rssAfter.peakMb.toFixed(0)} MB)` : 'unknown after load'}; ${at100k ? `${rss.text}: ${rss.met === undefined ? 'unknown' : rss.met ? 'met' : 'MISSED'}` : 'target (≤ 600 MB when ready) is for 100k'}.`,
  )
  const own = atMost(memoryReady.processes.find((p) => p.role === 'server')?.ownMb, 600, 'target ≤ 600 MB when ready')
  lines.push(
    `jobsnap memory when ready (started with its packed files out of the page cache): ${describeMemory(memoryReady)}; own memory (RSS minus shared file pages) ${jobs > FULL_JOBS ? `${own.text}: ${own.met === undefined ? 'unknown' : own.met ? 'met' : 'MISSED'}` : 'target (≤ 600 MB) is for 1M'}.`,
  )
  const cpuNotes = rows
    .filter((row) => row.result?.cpu)
    .map(
      (row) =>
        `${row.scenario.replace(/ \(.*$/, '')} / ${row.server.replace(/ \(.*$/, '')} ${percent(row.result!.cpu!.server)}/${percent(row.result!.cpu!.generator)}`,
    )
  lines.push(
    `CPU during each run, server/load generator (100% = one core; the machine has ${os.cpus().length}): ${cpuNotes.join('; ')}.`,
  )
  lines.push(
    `References: ${nginx.ok ? `${nginx.server.version} (1 worker)` : `nginx not run (${nginx.reason.split('\n')[0]})`}; ${jsonServer.ok ? `${jsonServer.server.version} (ready in ${(jsonServer.server.readyMs / 1000).toFixed(1)} s)` : `json-server not run (${jsonServer.reason.split('\n')[0]})`}.`,
  )
  // Last: it publishes another snapshot over the one the scenarios above served.
  lines.push(...(await refreshLines(dataset)))

  return { title, rows, lines }
}

// ---------- main ----------

/** A path as a person would type it (spaces and commas unescaped). */
const readable = (path: string) => decodeURIComponent(path.replace(/\+/g, ' '))

async function main(): Promise<void> {
  installExitHooks()
  mkdirSync(benchDir, { recursive: true })
  const workDir = mkdtempSync(path.join(os.tmpdir(), 'jobsnap-bench-'))
  onCleanup(() => rmSync(workDir, { recursive: true, force: true }))
  removeOnDeath(workDir)
  if (flags.soak) {
    const jobs = flags.quick ? QUICK_JOBS : FULL_JOBS
    const dataset = await prepareDataset(benchDir, repoDir, specFor(jobs, settings.seed), { rebuild: false, log })
    const report = await runSoak({
      repoDir,
      workDir,
      dataset,
      seconds: positiveInt(flags['soak-seconds'], flags.quick ? 60 : 600, 'soak-seconds'),
      restLoops: WRK_CONNECTIONS,
      mcpClients: 2,
      log,
    })
    process.stdout.write(`\n${report}`)
    const reportFile = path.join(benchDir, 'last-soak.md')
    writeFileSync(reportFile, report)
    log(`soak done; written to ${path.relative(repoDir, reportFile)}`)
    return
  }
  if (flags.cdn) {
    const jobs = flags.quick ? QUICK_JOBS : FULL_JOBS
    const context = runContext(repoDir)
    const dataset = await prepareDataset(benchDir, repoDir, specFor(jobs, settings.seed), { rebuild: false, log })
    // The run's context (date, commit, machine, load) under the report's title.
    const [title, ...rest] = (await runCdn({ repoDir, workDir, dataset, quick: flags.quick, log })).split('\n')
    const report = [title, '', ...contextLines(context), ...rest].join('\n')
    process.stdout.write(`\n${report}`)
    const reportFile = path.join(benchDir, 'last-cdn.md')
    writeFileSync(reportFile, report)
    log(`cdn done; written to ${path.relative(repoDir, reportFile)}`)
    return
  }
  const missing = new Set<string>()
  const sections: SectionFacts[] = []
  const context = runContext(repoDir)
  for (const jobs of sizes) sections.push(await benchDataset(jobs, workDir, missing))

  const header = [
    `# jobsnap bench${flags.quick ? ' (--quick)' : ''}${flags.large ? ' (--large)' : ''}${flags.rebuild ? ' (--rebuild)' : ''}${flags['builds-only'] ? ' (--builds-only)' : ''}`,
    '',
    ...contextLines(context),
    '',
    ...(flags['builds-only']
      ? []
      : [
          `autocannon: ${settings.connections} keep-alive connections (the worst query: 1), ${settings.seconds} s per run after ${settings.warmupSeconds} s warm-up, 127.0.0.1; MCP: ${settings.mcpClients} SDK clients (Client + StreamableHTTPClientTransport).`,
          `Load generator and servers share this machine; jobsnap runs with NODE_ENV=production, JOBSNAP_LOG=silent and rate limits raised.`,
        ]),
    flags.quick
      ? 'Quick mode: a small dataset and short runs, so the script cannot rot; the targets are for 100k jobs and are shown for reference only.'
      : 'Targets are printed, never asserted.',
  ]
  const anyClientBound = sections.some((section) =>
    section.rows.some((row) => (row.result?.cpu?.generator ?? 0) >= GENERATOR_BOUND),
  )
  const footer = [
    ...(!anyClientBound
      ? []
      : [
          `"client-bound": the load generator in this process (autocannon, or for the MCP rows the SDK clients) used ≥ ${Math.round(GENERATOR_BOUND * 100)}% of a core during that run, so the rate is what it could send, a lower bound for that server (nginx usually), and a ratio against it flatters jobsnap.`,
        ]),
    `Worst query (bench/workload.ts WORST_QUERY, plus a random salary_min of 1..2000 to defeat the cache): \`${readable(jobsnapListPath(WORST_QUERY))}\``,
    `Cached query: \`${readable(jobsnapListPath(CACHED_QUERY))}\`. json-server gets the nearest query it can express; what is not comparable is listed at jsonServerListPath in bench/workload.ts.`,
    ...(missing.size
      ? ['', 'Missing references (the rest ran without them):', ...[...missing].map((reason) => `- ${reason}`)]
      : []),
  ]
  const report = renderReport(header, sections, footer)
  process.stdout.write(`\n${report}`)
  // A builds-only run leaves the last full report in place.
  const reportFile = path.join(benchDir, flags['builds-only'] ? 'last-builds.md' : 'last-run.md')
  writeFileSync(reportFile, report)
  log(`done in ${((performance.now() - began) / 1000).toFixed(0)} s; written to ${path.relative(repoDir, reportFile)}`)
}

main().then(
  () => {
    killAll()
    process.exit(0)
  },
  (error: unknown) => {
    process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
    killAll()
    process.exit(1)
  },
)
