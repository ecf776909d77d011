/**
 * The wrk half of `npm run bench`: the same scenarios as the autocannon half
 * under a load generator fast enough to saturate nginx, with and without
 * `Accept-Encoding: gzip, br` (what CDNs send), beside the floor references
 * (bare node:http and bare h3 returning one real job's bytes), and then
 * jobsnap again with `--workers 2` (every core), MCP included.
 *
 * wrk runs one thread on the same two cores as the servers: the ratios within
 * a run are what to read, not the absolute rates.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { jobFileOnDisk, snapshotPaths } from '../core/index.ts'
import type { LoadResult } from './load.ts'
import { runMcpLoad } from './mcp-load.ts'
import { LOOPBACK } from '../support/processes.ts'
import { cpuSecondsOf, probe, responseHeaderFields, stopChild } from './procs.ts'
import { atLeast, atMost, formatMs, type ScenarioRow, type Target } from './report.ts'
import {
  clusterFacts,
  describeMemory,
  evictPackedFiles,
  memoryFigures,
  startBareServer,
  startJobsnap,
  startNginx,
  type RunningServer,
  warmPackedFiles,
} from './servers.ts'
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js'
import { runWrk, runWrkMcp } from './wrk.ts'
import {
  jobsnapListPath,
  mcpSearchArgs,
  pick,
  prng,
  randomListQuery,
  worstQueryVariant,
  type Vocabulary,
} from './workload.ts'

export interface WrkSectionOptions {
  wrk: string
  repoDir: string
  distDir: string
  snapshotDir: string
  workDir: string
  vocabulary: Vocabulary
  jobs: number
  jobsnap: RunningServer
  nginx?: RunningServer
  seconds: number
  warmupSeconds: number
  connections: number
  mcpClients: number
  readyTimeoutMs: number
  log: (line: string) => void
}

const CDN_ENCODING = 'gzip, br'
/** Paths per scenario: more than a run sends, so an "uncached" run never repeats a query. */
const PATHS_PER_RUN = 60_000

type Paths = (random: () => number) => string

export async function runWrkSection(o: WrkSectionOptions): Promise<{ rows: ScenarioRow[]; lines: string[] }> {
  const { vocabulary } = o
  const at1m = o.jobs >= 1_000_000
  const rows: ScenarioRow[] = []
  const lines: string[] = []
  let seed = 500

  const slug: Paths = (random) => `/api/v2/jobs/${pick(random, vocabulary.slugs)}`
  const v1Page: Paths = (random) => `/api/v1?page=${1 + Math.floor(random() * vocabulary.v1Pages)}`
  const mix: Paths = (random) => jobsnapListPath(randomListQuery(random, vocabulary))
  const mixLimit100: Paths = (random) => jobsnapListPath({ ...randomListQuery(random, vocabulary), limit: 100 })
  const worst: Paths = (random) => jobsnapListPath(worstQueryVariant(random))

  const measure = async (
    server: RunningServer,
    paths: Paths,
    options: { connections?: number; encoding?: string; seed: number },
  ): Promise<LoadResult> => {
    const random = prng(options.seed)
    const list = Array.from({ length: PATHS_PER_RUN }, () => paths(random))
    const connections = options.connections ?? o.connections
    if (o.warmupSeconds > 0) {
      const warm = prng(options.seed + 1_000_003)
      await runWrk({
        wrk: o.wrk,
        port: server.port,
        paths: Array.from({ length: 5000 }, () => paths(warm)),
        connections,
        seconds: o.warmupSeconds,
        acceptEncoding: options.encoding,
        workDir: o.workDir,
      })
    }
    const cpuBefore = cpuSecondsOf(server.child.pid)
    const result = await runWrk({
      wrk: o.wrk,
      port: server.port,
      paths: list,
      connections,
      seconds: o.seconds,
      acceptEncoding: options.encoding,
      workDir: o.workDir,
    })
    // The server's CPU over the measured run, in cores; wrk's own is not measured here.
    result.cpu = { server: (cpuSecondsOf(server.child.pid) - cpuBefore) / result.seconds, generator: 0 }
    await probe(server.port, '/__bench_drain', 300_000)
    return result
  }
  const describe = (r: LoadResult) =>
    `${Math.round(r.rps)} req/s, p50 ${formatMs(r.p50)} ms, p99 ${formatMs(r.p99)} ms, max ${formatMs(r.max)} ms, ${r.errors} errors`
  const run = async (
    scenario: string,
    server: RunningServer,
    paths: Paths,
    options: { connections?: number; encoding?: string; seed: number },
  ) => {
    o.log(`wrk ${scenario}: ${server.name}`)
    const result = await measure(server, paths, options)
    o.log(`  ${describe(result)}`)
    return result
  }
  const row = (
    scenario: string,
    server: string,
    result: LoadResult,
    targets: Target[] = [],
    reference?: { name: string; result?: LoadResult },
  ): ScenarioRow => ({
    scenario: `wrk: ${scenario}`,
    server,
    result,
    targets,
    reference,
  })

  // The floor references return the bytes of one real response of each kind: a single job, a v1 page.
  const jobFile = jobFileOnDisk(o.snapshotDir, snapshotPaths.v2Job(vocabulary.slugs[0]!))!
  const pageFile = path.join(o.snapshotDir, snapshotPaths.v1Page(25, 1))
  lines.push(
    `wrk floor references: bare node:http and a one-route h3 app on srvx (bench/bare-server.ts), returning the ${readFileSync(jobFile).length}-byte body of one real job (or the ${readFileSync(pageFile).length}-byte first v1 page) to every request, with none of jobsnap's headers, limiter or routing; and bare node:http sending jobsnap's header fields for that response with fixed values.`,
  )
  const fixed: Paths = () => '/'
  for (const [scenario, paths, file, examplePath] of [
    ['single job by slug', slug, jobFile, `/api/v2/jobs/${vocabulary.slugs[0]!}`],
    ['v1 page (limit 25)', v1Page, pageFile, '/api/v1?page=1'],
  ] as const) {
    // The third floor sends the header fields jobsnap sends for this kind of response, fixed values.
    const fields = await responseHeaderFields(o.jobsnap.port, examplePath)
    const headersFile = path.join(o.workDir, `headers-${fields.length}-${seed}.json`)
    writeFileSync(headersFile, JSON.stringify(fields))
    const bareNode = await startBareServer(o.repoDir, 'node', file)
    const bareH3 = await startBareServer(o.repoDir, 'h3', file)
    const bareHeaders = await startBareServer(o.repoDir, 'node-headers', file, headersFile)
    try {
      const s = ++seed
      const floor = `floor for ${scenario}: the same bytes every time`
      const nodeFloor = await run(floor, bareNode, fixed, { seed: s })
      const h3Floor = await run(floor, bareH3, fixed, { seed: s })
      const headersFloor = await run(`${floor}, with jobsnap's ${fields.length} header fields`, bareHeaders, fixed, {
        seed: s,
      })
      const vsFloor = (result: LoadResult) => atLeast(result.rps / nodeFloor.rps, 0.8, '≥ 0.8× bare node:http')
      const mine = await run(scenario, o.jobsnap, paths, { seed: s })
      rows.push(
        { ...row(floor, 'bare node:http', nodeFloor), isReference: true },
        {
          ...row(floor, 'bare h3 (srvx)', h3Floor, [], { name: 'bare node:http', result: nodeFloor }),
          isReference: true,
        },
        {
          ...row(`${floor}, with jobsnap's ${fields.length} header fields`, bareHeaders.name, headersFloor, [], {
            name: 'bare node:http',
            result: nodeFloor,
          }),
          isReference: true,
        },
        row(scenario, 'jobsnap', mine, [vsFloor(mine)], { name: 'bare node:http', result: nodeFloor }),
      )
      lines.push(
        `${scenario}: jobsnap ${(mine.rps / headersFloor.rps).toFixed(2)}× bare node:http sending the same ${fields.length} header fields (${fields.map(([name]) => name.toLowerCase()).join(', ')}) with fixed values; that floor is ${(headersFloor.rps / nodeFloor.rps).toFixed(2)}× the two-field one.`,
      )
      if (o.nginx)
        rows.push({
          ...row(scenario, 'nginx (1 worker)', await run(scenario, o.nginx, paths, { seed: s }), [], {
            name: 'bare node:http',
            result: nodeFloor,
          }),
          isReference: true,
        })
      const compressed = await run(`${scenario}, ${CDN_ENCODING}`, o.jobsnap, paths, {
        seed: s,
        encoding: CDN_ENCODING,
      })
      rows.push(row(`${scenario}, Accept-Encoding: ${CDN_ENCODING}`, 'jobsnap', compressed))
    } finally {
      await stopChild(bareNode.child)
      await stopChild(bareH3.child)
      await stopChild(bareHeaders.child)
    }
  }

  // The same targets at 100k and 1M: a million jobs in a small box is to answer as fast as 100k does.
  const uncachedTarget = (result: LoadResult) => atMost(result.p99, 10, 'p99 ≤ 10 ms')
  const mixSeed = ++seed
  const single = await run('v2 uncached random mix', o.jobsnap, mix, { seed: mixSeed })
  rows.push(row('v2 uncached random mix', 'jobsnap, 1 process', single, [uncachedTarget(single)]))
  const singleCompressed = await run(`v2 uncached random mix, ${CDN_ENCODING}`, o.jobsnap, mix, {
    seed: mixSeed + 7,
    encoding: CDN_ENCODING,
  })
  rows.push(
    row(`v2 uncached random mix, Accept-Encoding: ${CDN_ENCODING}`, 'jobsnap, 1 process', singleCompressed, [
      uncachedTarget(singleCompressed),
    ]),
  )
  const oneAtATime = await run('v2 uncached, limit=100, one request at a time', o.jobsnap, mixLimit100, {
    seed: ++seed,
    connections: 1,
  })
  rows.push(
    row('v2 uncached, limit=100, one request at a time', 'jobsnap, 1 process', oneAtATime, [
      atMost(oneAtATime.p50, 2, 'p50 ≤ 2 ms'),
    ]),
  )
  const worstOne = await run('v2 worst query, one at a time', o.jobsnap, worst, { seed: ++seed, connections: 1 })
  rows.push(
    row('v2 worst query, one at a time', 'jobsnap, 1 process', worstOne, [
      atMost(worstOne.max, at1m ? 25 : 50, `max ≤ ${at1m ? 25 : 50} ms (max ${formatMs(worstOne.max)} ms)`),
    ]),
  )

  // MCP on one process, for the ratio with every core below.
  const mcpSeed = ++seed
  const mcpArgs = (s: number) => {
    const random = prng(s)
    return () => mcpSearchArgs(randomListQuery(random, vocabulary), vocabulary)
  }
  const mcpRun = async (server: RunningServer) => {
    o.log(`MCP search_jobs, ${o.mcpClients} SDK clients: ${server.name}`)
    if (o.warmupSeconds > 0)
      await runMcpLoad({
        port: server.port,
        clients: o.mcpClients,
        seconds: o.warmupSeconds,
        tool: 'search_jobs',
        nextArgs: mcpArgs(mcpSeed + 1_000_003),
      })
    const result = await runMcpLoad({
      port: server.port,
      clients: o.mcpClients,
      seconds: o.seconds,
      tool: 'search_jobs',
      nextArgs: mcpArgs(mcpSeed),
    })
    o.log(`  ${describe(result).replace('req/s', 'calls/s')}`)
    return result
  }
  const mcpSingle = await mcpRun(o.jobsnap)
  rows.push(
    row(`MCP search_jobs, ${o.mcpClients} SDK clients (calls/s)`, 'jobsnap, 1 process', mcpSingle, [
      atLeast(mcpSingle.rps, 600, '≥ 600 calls/s on one process'),
    ]),
  )
  // The same calls from wrk: the SDK clients above take about a core of the two to send them.
  const mcpBodies = (s: number, count: number) => {
    const next = mcpArgs(s)
    return Array.from({ length: count }, (_, i) =>
      JSON.stringify({
        jsonrpc: '2.0',
        id: i + 1,
        method: 'tools/call',
        params: { name: 'search_jobs', arguments: next() },
      }),
    )
  }
  const mcpWrkRun = async (server: RunningServer) => {
    o.log(`MCP search_jobs, tools/call POSTs from wrk: ${server.name}`)
    const options = {
      wrk: o.wrk,
      port: server.port,
      connections: o.connections,
      endpoint: '/api/mcp',
      protocolVersion: LATEST_PROTOCOL_VERSION,
      workDir: o.workDir,
    }
    if (o.warmupSeconds > 0)
      await runWrkMcp({ ...options, bodies: mcpBodies(mcpSeed + 2_000_003, 5000), seconds: o.warmupSeconds })
    const result = await runWrkMcp({ ...options, bodies: mcpBodies(mcpSeed, PATHS_PER_RUN), seconds: o.seconds })
    o.log(`  ${describe(result).replace('req/s', 'calls/s')}`)
    return result
  }
  const mcpWrkSingle = await mcpWrkRun(o.jobsnap)
  rows.push(
    row(`MCP search_jobs, tools/call POSTs from wrk (calls/s)`, 'jobsnap, 1 process', mcpWrkSingle, [
      atLeast(mcpWrkSingle.rps, 600, '≥ 600 calls/s on one process'),
    ]),
  )

  // The collector's pauses over every run this process served (its /health counts them from ready on).
  const gc = await gcFacts(o.jobsnap)
  if (gc)
    lines.push(
      `jobsnap (one process) garbage collection from ready to the end of its runs: ${gc.collections.toLocaleString('en-US')} collections, longest pause ${formatMs(gc.longest_pause_ms)} ms.`,
    )

  // Metrics and access logs: what they cost the cheapest request, with and without in this run, alternated
  // (without, with, without, with) so a drift in the machine's speed falls on both. Access lines go to a
  // file, as to a log file: a pipe read by this process would also measure the reader, on the same two cores.
  await stopChild(o.jobsnap.child)
  const observedSeed = ++seed
  const observability: Record<'off' | 'on', LoadResult[]> = { off: [], on: [] }
  let scrapeMs: number[] = []
  for (let round = 0; round < 2; round++)
    for (const mode of ['off', 'on'] as const) {
      const server = await startJobsnap(
        o.repoDir,
        o.distDir,
        o.readyTimeoutMs,
        1,
        mode === 'off'
          ? { JOBSNAP_METRICS: 'false', JOBSNAP_LOG: 'silent' }
          : { JOBSNAP_METRICS: 'true', JOBSNAP_LOG: 'json', JOBSNAP_ACCESS_LOG: 'true' },
        mode === 'on' ? path.join(o.workDir, 'access.log') : undefined,
      )
      try {
        observability[mode].push(
          await run(`single job by slug, metrics and access log ${mode}`, server, slug, { seed: observedSeed }),
        )
        if (mode === 'on' && round === 1) scrapeMs = await timeScrapes(server, 30)
      } finally {
        await stopChild(server.child)
      }
    }
  const pooled = (results: LoadResult[]): LoadResult => ({
    ...results[0]!,
    rps: results.reduce((sum, r) => sum + r.rps, 0) / results.length,
    p50: Math.max(...results.map((r) => r.p50)),
    p99: Math.max(...results.map((r) => r.p99)),
    max: Math.max(...results.map((r) => r.max)),
    errors: results.reduce((sum, r) => sum + r.errors, 0),
  })
  const observedOff = pooled(observability.off)
  const observedOn = pooled(observability.on)
  rows.push(
    {
      ...row('single job by slug, metrics and access log off (2 runs, mean rate)', 'jobsnap', observedOff),
      isReference: true,
    },
    row(
      'single job by slug, metrics and access log on (2 runs, mean rate)',
      'jobsnap',
      observedOn,
      [atLeast(observedOn.rps / observedOff.rps, 0.95, 'costs ≤ 5% (≥ 0.95× with both off)')],
      { name: 'both off', result: observedOff },
    ),
  )
  // Throughput under wrk on the same two cores amplifies a cost: a server that is a little slower leaves wrk
  // idle more often, and every wakeup of an idle wrk is paid on loopback. The server's own CPU per request
  // says what the observing code costs without that.
  const cpuPerRequest = (results: LoadResult[]) =>
    results.reduce((sum, r) => sum + ((r.cpu?.server ?? 0) * 1e6) / Math.max(1, r.rps), 0) / results.length
  const cpuOff = cpuPerRequest(observability.off)
  const cpuOn = cpuPerRequest(observability.on)
  if (cpuOff > 0)
    lines.push(
      `Metrics and access log, server CPU per single-job request (user + system, mean of the runs above): off ${cpuOff.toFixed(1)} µs, on ${cpuOn.toFixed(1)} µs (${cpuOn >= cpuOff ? '+' : ''}${((cpuOn / cpuOff - 1) * 100).toFixed(1)}%); throughput ${(observedOn.rps / observedOff.rps).toFixed(2)}× (wrk shares the cores, so a slower server also pays more wakeups of an idle wrk).`,
    )
  // The same question asked of nginx serving the same single jobs from disk: what one JSON access line per
  // request costs a static server written in C, as a yardstick for the ≤ 5% target above.
  if (o.nginx) {
    const nginxRuns: Record<'off' | 'on', LoadResult[]> = { off: [], on: [] }
    for (let round = 0; round < 2; round++)
      for (const mode of ['off', 'on'] as const) {
        const started = await startNginx(o.snapshotDir, o.workDir, {
          name: `nginx-access-${mode}`,
          accessLog: mode === 'on' ? path.join(o.workDir, 'nginx-access.log') : undefined,
        })
        if (!started.ok) break
        try {
          nginxRuns[mode].push(
            await run(`single job by slug, access log ${mode}`, started.server, slug, { seed: observedSeed }),
          )
        } finally {
          await stopChild(started.server.child)
        }
      }
    if (nginxRuns.on.length > 0 && nginxRuns.on.length === nginxRuns.off.length) {
      const rate = (results: LoadResult[]) => results.reduce((sum, r) => sum + r.rps, 0) / results.length
      const [offRate, onRate] = [rate(nginxRuns.off), rate(nginxRuns.on)]
      const [offCpu, onCpu] = [cpuPerRequest(nginxRuns.off), cpuPerRequest(nginxRuns.on)]
      lines.push(
        `For comparison, nginx (one worker, the same single jobs from disk) with a JSON access line per request (the same fields, to a file, 64 KiB buffer) off / on: ${Math.round(offRate)} / ${Math.round(onRate)} req/s (${(onRate / offRate).toFixed(2)}×); CPU per request ${offCpu.toFixed(1)} / ${onCpu.toFixed(1)} µs (${onCpu >= offCpu ? '+' : ''}${((onCpu / offCpu - 1) * 100).toFixed(1)}%; mean of two runs each, alternated).`,
      )
    }
  }
  if (scrapeMs.length > 0) {
    const sorted = [...scrapeMs].sort((a, b) => a - b)
    const median = sorted[Math.floor(sorted.length / 2)]!
    const scrapeTarget = atMost(median, 5, 'median ≤ 5 ms')
    lines.push(
      `/metrics scrape at ${o.jobs.toLocaleString('en-US')} jobs, after the load above (${sorted.length} scrapes, one at a time): median ${formatMs(median)} ms, max ${formatMs(sorted.at(-1)!)} ms (${scrapeTarget.text}: ${scrapeTarget.met ? 'met' : 'MISSED'}).`,
    )
  }

  // Every core: the same server with two workers (the one-process servers are stopped: they would share the cores).
  o.log('starting jobsnap --workers 2 (its packed files out of the page cache first)')
  // So the page cache counted when ready is what its workers read, not what the bench warmed; read again after.
  evictPackedFiles(o.distDir)
  const cluster = await startJobsnap(o.repoDir, o.distDir, o.readyTimeoutMs, 2)
  try {
    const facts = clusterFacts(cluster)
    const ready = atMost(facts && facts.readyMsMax / 1000, 3, '≤ 3 s per worker')
    lines.push(
      `jobsnap --workers 2: all workers ready ${(cluster.readyMs / 1000).toFixed(2)} s after spawn; slowest worker ${facts ? (facts.readyMsMax / 1000).toFixed(2) : '?'} s from its own start (${ready.met === undefined ? ready.text : `${ready.text}: ${ready.met ? 'met' : 'MISSED'}`}); RSS of the primary and both workers together ${facts?.rssMbTotal ?? '?'} MB when ready.`,
    )
    const memory = memoryFigures(cluster, o.distDir)
    warmPackedFiles(o.distDir)
    const total = atMost(memory.totalMb, 1536, 'target ≤ 1.5 GB')
    lines.push(
      `jobsnap --workers 2 memory when ready (started with its packed files out of the page cache): ${describeMemory(memory)}; ${at1m ? `${total.text}: ${total.met ? 'met' : 'MISSED'}` : 'target (≤ 1.5 GB) is for 1M'}.`,
    )
    const both = await run('v2 uncached random mix', cluster, mix, { seed: mixSeed })
    rows.push(
      row(
        'v2 uncached random mix',
        'jobsnap --workers 2',
        both,
        [atLeast(both.rps / single.rps, 1.3, '≥ 1.3× one process'), uncachedTarget(both)],
        { name: 'jobsnap, 1 process', result: single },
      ),
    )
    const bothCompressed = await run(`v2 uncached random mix, ${CDN_ENCODING}`, cluster, mix, {
      seed: mixSeed + 7,
      encoding: CDN_ENCODING,
    })
    rows.push(
      row(
        `v2 uncached random mix, Accept-Encoding: ${CDN_ENCODING}`,
        'jobsnap --workers 2',
        bothCompressed,
        [uncachedTarget(bothCompressed)],
        { name: 'jobsnap, 1 process', result: singleCompressed },
      ),
    )
    const bothSlug = await run('single job by slug', cluster, slug, { seed: ++seed })
    rows.push(row('single job by slug', 'jobsnap --workers 2', bothSlug))
    const mcpBoth = await mcpRun(cluster)
    rows.push(
      row(
        `MCP search_jobs, ${o.mcpClients} SDK clients (calls/s)`,
        'jobsnap --workers 2',
        mcpBoth,
        [atLeast(mcpBoth.rps, 1000, '≥ 1,000 calls/s with every core')],
        { name: 'jobsnap, 1 process', result: mcpSingle },
      ),
    )
    const mcpWrkBoth = await mcpWrkRun(cluster)
    rows.push(
      row(
        `MCP search_jobs, tools/call POSTs from wrk (calls/s)`,
        'jobsnap --workers 2',
        mcpWrkBoth,
        [atLeast(mcpWrkBoth.rps, 1000, '≥ 1,000 calls/s with every core')],
        { name: 'jobsnap, 1 process', result: mcpWrkSingle },
      ),
    )
  } finally {
    await stopChild(cluster.child)
  }
  return { rows, lines }
}

/** Wall time of `count` GET /metrics, one after another, milliseconds each. */
async function timeScrapes(server: RunningServer, count: number): Promise<number[]> {
  const times: number[] = []
  for (let i = 0; i < count; i++) {
    const started = performance.now()
    const response = await fetch(`http://${LOOPBACK}:${server.port}/metrics`)
    await response.text()
    if (response.ok) times.push(performance.now() - started)
  }
  return times
}

/** The GC figures a server's /health reports, or undefined when it does not. */
async function gcFacts(server: RunningServer): Promise<{ longest_pause_ms: number; collections: number } | undefined> {
  try {
    const health = (await (await fetch(`http://${LOOPBACK}:${server.port}/health`)).json()) as {
      gc?: { longest_pause_ms: number; collections: number }
    }
    return health.gc
  } catch {
    return undefined
  }
}
