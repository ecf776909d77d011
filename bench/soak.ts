/**
 * `npm run bench -- --soak`: a long run under faults, as production would
 * see them. Mixed REST (single jobs, v1 pages, uncached v2 lists) and MCP
 * (search_jobs through the SDK client) load against `jobsnap serve
 * --workers 2` whose rate limits live in a real redis-server, while three
 * new snapshots are published (1% of jobs retitled, incremental builds) and
 * Redis is killed and restarted midway. Prints the failed requests (goal 0),
 * the longest request around each fault beside the run's p99, RSS of the
 * primary and workers before each fault and at the end (goal: the end within
 * 10% of the first, taken after warm-up, before any fault), and what
 * /metrics counted. The builds run at `nice -n 19`.
 *
 * Default: 100k jobs for 600 s; `--quick` 3k jobs for 60 s; `--soak-seconds N`.
 */
import { cpSync, readFileSync, writeFileSync } from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { LOOPBACK, freePort } from '../support/processes.ts'
import { cliArgs, type PreparedDataset } from './datasets.ts'
import { memoryOf, runToEnd, startChild, stopChild, type Child } from './procs.ts'
import { formatMs } from './report.ts'
import { startJobsnap } from './servers.ts'
import { jobsnapListPath, loadVocabulary, mcpSearchArgs, pick, prng, randomListQuery } from './workload.ts'

export interface SoakOptions {
  repoDir: string
  workDir: string
  dataset: PreparedDataset
  seconds: number
  /** Concurrent REST loops and MCP clients. */
  restLoops: number
  mcpClients: number
  log: (line: string) => void
}

interface Fault {
  name: string
  startMs: number
  endMs: number
}

const REDIS_SERVER = '/usr/bin/redis-server'

async function waitForPort(port: number, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, LOOPBACK)
      socket.once('connect', () => {
        socket.destroy()
        resolve(true)
      })
      socket.once('error', () => resolve(false))
    })
    if (open) return
    if (performance.now() > deadline) throw new Error(`nothing listening on ${port} after ${timeoutMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

function startRedis(port: number): Child {
  return startChild('redis-server', REDIS_SERVER, [
    '--port',
    String(port),
    '--bind',
    LOOPBACK,
    '--save',
    '',
    '--appendonly',
    'no',
  ])
}

/** The RSS of jobsnap's processes (the process started and all below it), megabytes. */
function clusterRssMb(rootPid: number): number {
  // The whole tree: the launcher that reran jobsnap with huge pages (bin/huge-pages.mjs), the primary, its workers.
  const pids: number[] = []
  const visit = (pid: number) => {
    pids.push(pid)
    try {
      const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim()
      for (const child of children ? children.split(/\s+/).map(Number) : []) visit(child)
    } catch {
      // no /proc: this process alone
    }
  }
  visit(rootPid)
  return pids.reduce((sum, pid) => sum + (memoryOf(pid)?.rssMb ?? 0), 0)
}

/** Retitles every hundredth job record: a 1% change for an incremental build. */
function retitleOnePercent(jobsFile: string, revision: number): void {
  const lines = readFileSync(jobsFile, 'utf8').split('\n')
  for (let i = 0; i < lines.length; i += 100) {
    if (!lines[i]) continue
    const job = JSON.parse(lines[i]!) as { title: string }
    job.title = `${job.title.replace(/ \(soak \d+\)$/, '')} (soak ${revision})`
    lines[i] = JSON.stringify(job)
  }
  writeFileSync(jobsFile, lines.join('\n'))
}

export async function runSoak(o: SoakOptions): Promise<string> {
  const { log } = o
  // A private copy: the soak edits the data, and the cached bench dataset must stay as it is.
  const dataDir = path.join(o.workDir, 'soak-data')
  const distDir = path.join(o.workDir, 'soak-dist')
  cpSync(o.dataset.dataDir, dataDir, { recursive: true })
  // The build runs on the serving machine here, so at the lowest CPU priority (`nice -n 19`), as docs/data.md
  // advises for a host that serves while it builds: otherwise it takes both cores from the workers.
  const build = async () =>
    (
      await runToEnd(
        'build',
        'nice',
        ['-n', '19', process.execPath, ...cliArgs('build', '--data', dataDir, '--out', distDir, '--quiet')],
        { cwd: o.repoDir },
      )
    ).ms
  log('soak: first build of the private copy')
  await build()
  const vocabulary = loadVocabulary(path.join(distDir, 'current'))

  const redisPort = await freePort()
  let redis = startRedis(redisPort)
  await waitForPort(redisPort, 10_000)
  log('soak: starting jobsnap --workers 2 with limits in redis')
  const server = await startJobsnap(o.repoDir, distDir, 300_000, 2, {
    JOBSNAP_REDIS_URL: `redis://${LOOPBACK}:${redisPort}`,
    JOBSNAP_LOG: 'json',
  })
  const base = `http://${LOOPBACK}:${server.port}`

  // Every request: when it started (ms from the soak's start), how long it took, whether it failed.
  const startedAt: number[] = []
  const took: number[] = []
  const failures: Record<string, number> = {}
  const failedAt: number[] = []
  let failed = 0
  const fail = (what: string) => {
    failed++
    failedAt.push(now())
    failures[what] = (failures[what] ?? 0) + 1
  }
  const t0 = performance.now()
  const now = () => performance.now() - t0
  const deadline = o.seconds * 1000
  let stop = false

  const restLoop = async (seed: number) => {
    const random = prng(seed)
    while (!stop) {
      const roll = random()
      const requestPath =
        roll < 0.4
          ? `/api/v2/jobs/${pick(random, vocabulary.slugs)}`
          : roll < 0.6
            ? `/api/v1?page=${1 + Math.floor(random() * vocabulary.v1Pages)}`
            : jobsnapListPath(randomListQuery(random, vocabulary))
      const start = now()
      try {
        const response = await fetch(`${base}${requestPath}`, { headers: { 'accept-encoding': 'gzip, br' } })
        await response.arrayBuffer()
        // A slug sampled from the first snapshot may be retitled, never removed: every answer should be 200.
        if (response.status !== 200) fail(`REST ${response.status}`)
      } catch (error) {
        fail(`REST ${(error as Error).message.slice(0, 60)}`)
      }
      startedAt.push(start)
      took.push(now() - start)
    }
  }
  // Each SDK client reconnects every few hundred calls, as agents come and go (one transport kept for the
  // whole run also gathers abort listeners on its signal, per call, in the SDK version used here).
  const CALLS_PER_CONNECTION = 300
  const mcpLoop = async (seed: number) => {
    const random = prng(seed)
    while (!stop) await mcpConnection(random, seed)
  }
  const mcpConnection = async (random: () => number, seed: number) => {
    const client = new Client({ name: `jobsnap-soak-${seed}`, version: '1.0.0' })
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/api/mcp`)))
    } catch (error) {
      fail(`MCP connect ${(error as Error).message.slice(0, 60)}`)
      return
    }
    try {
      for (let call = 0; call < CALLS_PER_CONNECTION && !stop; call++) {
        const start = now()
        try {
          const result = await client.callTool({
            name: 'search_jobs',
            arguments: mcpSearchArgs(randomListQuery(random, vocabulary), vocabulary),
          })
          if (result.isError) fail('MCP tool error')
        } catch (error) {
          fail(`MCP ${(error as Error).message.slice(0, 60)}`)
        }
        startedAt.push(start)
        took.push(now() - start)
      }
    } finally {
      await client.close().catch(() => {})
    }
  }

  const loops = [
    ...Array.from({ length: o.restLoops }, (_, i) => restLoop(9000 + i)),
    ...Array.from({ length: o.mcpClients }, (_, i) => mcpLoop(9500 + i)),
  ]

  const faults: Fault[] = []
  const at = (fraction: number) =>
    new Promise((resolve) => setTimeout(resolve, Math.max(0, fraction * deadline - now())))
  const publish = async (revision: number) => {
    const start = now()
    retitleOnePercent(path.join(dataDir, 'jobs.ndjson'), revision)
    const buildMs = await build()
    faults.push({
      name: `publish snapshot ${revision} (incremental build, ${(buildMs / 1000).toFixed(1)} s)`,
      startMs: start,
      endMs: now(),
    })
    log(`soak: published snapshot ${revision} at ${(start / 1000).toFixed(0)} s`)
  }
  const restartRedis = async () => {
    const down = now()
    // SIGKILL: an outage, not a maintenance window.
    await stopChild(redis, 0)
    await new Promise((resolve) => setTimeout(resolve, 3000))
    redis = startRedis(redisPort)
    await waitForPort(redisPort, 10_000)
    faults.push({ name: 'redis killed, down 3 s, restarted', startMs: down, endMs: now() })
    log(`soak: redis restarted at ${(now() / 1000).toFixed(0)} s`)
  }
  // RSS of the primary and workers, sampled before each fault and at the end, with what /metrics says the
  // workers hold (summed over them): JS heap, memory outside it (snapshot bodies, buffers), bounded caches.
  const rss: { atMs: number; mb: number; heapMb?: number; externalMb?: number; cachesMb?: number }[] = []
  const sampleRss = async () => {
    const sample: (typeof rss)[number] = { atMs: now(), mb: clusterRssMb(server.child.pid) }
    rss.push(sample)
    try {
      const text = await (await fetch(`${base}/metrics`)).text()
      const sum = (name: string) =>
        text
          .split('\n')
          .filter((line) => line.startsWith(`${name} `) || line.startsWith(`${name}{`))
          .reduce((total, line) => total + Number(line.slice(line.lastIndexOf(' ') + 1)), 0) /
        (1 << 20)
      sample.heapMb = sum('nodejs_heap_size_used_bytes')
      sample.externalMb = sum('nodejs_external_memory_bytes')
      sample.cachesMb = sum('jobsnap_cache_bytes')
    } catch {
      // A scrape that fails leaves the RSS figure alone.
    }
  }
  const timeline = (async () => {
    await at(0.19)
    await sampleRss()
    await at(0.2)
    await publish(1)
    await at(0.39)
    await sampleRss()
    await at(0.4)
    await publish(2)
    await at(0.5)
    await sampleRss()
    await restartRedis()
    await at(0.69)
    await sampleRss()
    await at(0.7)
    await publish(3)
    await at(1)
    await sampleRss()
  })()
  await timeline
  const rssStart = rss[0]!.mb
  const rssEnd = rss.at(-1)!.mb
  stop = true
  await Promise.all(loops)

  const metrics = await (await fetch(`${base}/metrics`)).text()
  await stopChild(server.child)
  await stopChild(redis)

  const sorted = [...took].sort((a, b) => a - b)
  const p99 = sorted[Math.floor(sorted.length * 0.99)] ?? 0
  const AROUND_MS = 5_000
  const longestAround = (fault: Fault) => {
    let longest = 0
    for (let i = 0; i < startedAt.length; i++) {
      const s = startedAt[i]!
      if (s + took[i]! >= fault.startMs - AROUND_MS && s <= fault.endMs + AROUND_MS && took[i]! > longest)
        longest = took[i]!
    }
    return longest
  }
  const metric = (name: string) =>
    metrics
      .split('\n')
      .filter((line) => line.startsWith(name))
      .map((line) => line.replace(/^jobsnap_/, ''))
      .join('; ')
  const rssChange = (rssEnd - rssStart) / rssStart
  const lines = [
    `# jobsnap soak: ${o.dataset.manifest.counts.live_jobs.toLocaleString('en-US')} live jobs, ${o.seconds} s, jobsnap --workers 2, rate limits in redis`,
    '',
    `Load: ${o.restLoops} REST loops (40% single jobs, 20% v1 pages, 40% uncached v2 list mix; Accept-Encoding: gzip, br) and ${o.mcpClients} MCP SDK clients calling search_jobs, one request at a time each.`,
    `Requests: ${took.length.toLocaleString('en-US')} (${(took.length / o.seconds).toFixed(0)}/s); failed: ${failed}${
      failed
        ? ` (${Object.entries(failures)
            .map(([k, v]) => `${k}: ${v}`)
            .join(', ')})`
        : ''
    } (goal 0).`,
    `Latency over the whole run: p50 ${formatMs(sorted[Math.floor(sorted.length / 2)])} ms, p99 ${formatMs(p99)} ms, max ${formatMs(sorted.at(-1))} ms.`,
    ...faults.map((fault) => {
      const near = failedAt.filter((t) => t >= fault.startMs - AROUND_MS && t <= fault.endMs + AROUND_MS).length
      return `- ${fault.name}, at ${(fault.startMs / 1000).toFixed(0)} s: longest request from ${AROUND_MS / 1000} s before to ${AROUND_MS / 1000} s after: ${formatMs(longestAround(fault))} ms; ${near} failed requests in that window.`
    }),
    `Failed requests at (s): ${failedAt.length ? failedAt.map((t) => (t / 1000).toFixed(1)).join(', ') : 'none'}.`,
    `RSS of the primary and both workers, before each fault and at the end: ${rss.map((r) => `${r.mb.toFixed(0)} MB at ${(r.atMs / 1000).toFixed(0)} s`).join(', ')}; end against the first (steady state, before any fault): ${rssChange >= 0 ? '+' : ''}${(rssChange * 100).toFixed(1)}% (goal within 10%: ${Math.abs(rssChange) <= 0.1 ? 'met' : 'MISSED'}).`,
    `Memory at the same moments, from /metrics summed over the workers (JS heap used / outside the heap / bounded caches, MB): ${rss.map((r) => (r.heapMb === undefined ? '?' : `${r.heapMb.toFixed(0)} / ${r.externalMb!.toFixed(0)} / ${r.cachesMb!.toFixed(0)}`)).join(', ')}.`,
    `/metrics at the end (summed over both workers): ${metric('jobsnap_snapshot_loads_total')}; ${metric('jobsnap_redis_connected')}; ${metric('jobsnap_rate_limited_total')}; ${metric('jobsnap_ready')}.`,
  ]
  return `${lines.join('\n')}\n`
}
