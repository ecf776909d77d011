/**
 * `npm run bench -- --cdn`: jobsnap behind deploy/varnish.vcl (Debian's
 * varnishd), under Zipf-distributed traffic over every single job, every v1
 * page and a pool of list queries (many distinct URLs), twice:
 *
 * 1. with a shared lifetime of a day (JOBSNAP_CDN_TTL=86400) and `jobsnap
 *    purge --varnish` after the publish;
 * 2. with only the browsers' 60 s lifetime (JOBSNAP_CDN_TTL=0), no purge.
 *
 * Each time: every URL is requested once (the cache at steady state: each
 * distinct URL fetched once per publish), then autocannon measures the edge
 * (hit ratio and requests that reached jobsnap per second from varnishstat,
 * p50/p99 at the client); then, under a paced Zipf load, 1% of the job records
 * are retitled and built, and the requests that reach jobsnap in the next
 * minute are counted beside the purged objects asked for again, with the
 * seconds from `jobsnap build` starting to every changed job served fresh at
 * the edge. Last, in the 60 s run, jobsnap is stopped for a minute under the
 * same load: answers that are not 200 are counted (every URL is cached).
 *
 * `--quick` (3k jobs): a 10 s lifetime and 10 s windows instead of 60 s, so the
 * code path runs in CI in about a minute; its figures are not the targets'.
 */
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import http from 'node:http'
import path from 'node:path'
import { gunzipSync } from 'node:zlib'
import { CURRENT_LINK, snapshotPaths } from '../core/index.ts'
import { freePort, LOOPBACK } from '../support/processes.ts'
import {
  NO_EDGE_LIMITS,
  renderVcl,
  VARNISHD,
  varnishArgs,
  varnishCounters,
  varnishMissing,
} from '../support/varnish.ts'
import { cliArgs, type PreparedDataset } from './datasets.ts'
import { runLoad, type LoadResult } from './load.ts'
import { runToEnd, startChild, stopChild, waitForHttp, type Child } from './procs.ts'
import { formatMs } from './report.ts'
import { startJobsnap, type RunningServer } from './servers.ts'
import { jobsnapListPath, loadVocabulary, prng, randomListQuery } from './workload.ts'

export interface CdnOptions {
  repoDir: string
  workDir: string
  dataset: PreparedDataset
  quick: boolean
  log: (line: string) => void
}

/** What every request of the bench sends: what a browser or HTTP library accepts. */
const HEADERS = { 'accept-encoding': 'gzip' }
/** Zipf exponent over the URL universe (rank 1 the most asked for). */
const ZIPF_S = 1
const COUNTERS = ['MAIN.client_req', 'MAIN.cache_hit', 'MAIN.cache_miss', 'MAIN.s_pass', 'MAIN.backend_req']

interface Edge {
  child: Child
  port: number
  workDir: string
}

/** The URL universe: every job, every v1 page (25 a page), and `lists` distinct list queries; shuffled. */
function universeOf(snapshotDir: string, lists: number, seed: number): { urls: string[]; slugs: string[] } {
  const vocabulary = loadVocabulary(snapshotDir)
  const random = prng(seed)
  const urls = vocabulary.slugs.map((slug) => `/api/v2/jobs/${slug}`)
  for (let page = 1; page <= vocabulary.v1Pages; page++) urls.push(`/api/v1?page=${page}`)
  const queries = new Set<string>()
  for (let tries = 0; queries.size < lists && tries < lists * 20; tries++)
    queries.add(jobsnapListPath(randomListQuery(random, vocabulary)))
  urls.push(...queries)
  for (let i = urls.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1))
    ;[urls[i], urls[j]] = [urls[j]!, urls[i]!]
  }
  return { urls, slugs: vocabulary.slugs }
}

/** A sampler of the universe's URLs by Zipf rank. */
function zipf(urls: string[], seed: number): () => string {
  const cdf = new Float64Array(urls.length)
  let total = 0
  for (let rank = 0; rank < urls.length; rank++) {
    total += 1 / (rank + 1) ** ZIPF_S
    cdf[rank] = total
  }
  const random = prng(seed)
  return () => {
    const target = random() * total
    let lo = 0
    let hi = urls.length - 1
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (cdf[mid]! < target) lo = mid + 1
      else hi = mid
    }
    return urls[lo]!
  }
}

interface Fetched {
  status: number
  body: Buffer
}

function fetchOnce(agent: http.Agent, port: number, requestPath: string, gzip = true): Promise<Fetched> {
  return new Promise((resolve, reject) => {
    const request = http.get(
      { host: LOOPBACK, port, path: requestPath, agent, headers: gzip ? HEADERS : {}, timeout: 30_000 },
      (response) => {
        const chunks: Buffer[] = []
        response.on('data', (chunk: Buffer) => chunks.push(chunk))
        response.once('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks) }))
        response.once('error', reject)
      },
    )
    request.once('timeout', () => request.destroy(new Error('timeout')))
    request.once('error', reject)
  })
}

/** Every URL once, `concurrency` at a time: the cache then holds each of them. */
async function crawl(port: number, urls: string[], concurrency: number): Promise<{ ms: number; failed: number }> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency })
  const t0 = performance.now()
  let next = 0
  let failed = 0
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < urls.length) {
        const url = urls[next++]!
        const result = await fetchOnce(agent, port, url).catch(() => undefined)
        if (result?.status !== 200) failed++
      }
    }),
  )
  agent.destroy()
  return { ms: performance.now() - t0, failed }
}

/** A Zipf load at a fixed rate (requests a second), recording when each URL was asked for and what came back. */
class PacedLoad {
  readonly asked: { at: number; url: string; status: number }[] = []
  private stopped = false
  private readonly done: Promise<void>

  constructor(port: number, nextUrl: () => string, rate: number, concurrency: number) {
    const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency })
    const t0 = performance.now()
    let n = 0
    const worker = async () => {
      while (!this.stopped) {
        const due = t0 + (n++ * 1000) / rate
        const wait = due - performance.now()
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
        if (this.stopped) break
        const url = nextUrl()
        const at = performance.now()
        const result = await fetchOnce(agent, port, url).catch(() => undefined)
        this.asked.push({ at, url, status: result?.status ?? 0 })
      }
    }
    this.done = Promise.all(Array.from({ length: concurrency }, worker)).then(() => agent.destroy())
  }

  async stop(): Promise<void> {
    this.stopped = true
    await this.done
  }

  between(from: number, to: number) {
    return this.asked.filter((entry) => entry.at >= from && entry.at < to)
  }
}

async function startEdge(o: CdnOptions, name: string, backendPort: number, storage: string): Promise<Edge> {
  const dir = path.join(o.workDir, name)
  mkdirSync(dir, { recursive: true })
  const vclFile = path.join(dir, 'jobsnap.vcl')
  // One load generator is one client address: the edge's limits are raised out of the way.
  writeFileSync(vclFile, await renderVcl(backendPort, NO_EDGE_LIMITS))
  const port = await freePort()
  const workDir = path.join(dir, 'work')
  const child = startChild('varnishd', VARNISHD, varnishArgs({ workDir, port, vclFile, storage }))
  await waitForHttp(child, port, '/health', { timeoutMs: 30_000 })
  return { child, port, workDir }
}

/** Retitles every hundredth job record (1%); returns the slugs of those that are live, and the title marker. */
function retitleOnePercent(jobsFile: string, revision: number, live: Set<string>): { slugs: string[]; marker: string } {
  const marker = ` (cdn ${revision})`
  const lines = readFileSync(jobsFile, 'utf8').split('\n')
  const slugs: string[] = []
  for (let i = 0; i < lines.length; i += 100) {
    if (!lines[i]) continue
    const job = JSON.parse(lines[i]!) as { title: string; slug: string }
    job.title = `${job.title.replace(/ \(cdn \d+\)$/, '')}${marker}`
    if (live.has(job.slug)) slugs.push(job.slug)
    lines[i] = JSON.stringify(job)
  }
  writeFileSync(jobsFile, lines.join('\n'))
  return { slugs, marker }
}

/** The tags a URL's answer carries (as jobsnap tags it): what a purge of `tags` reaches. */
function tagsOf(url: string): string[] {
  if (url.startsWith('/api/v2/jobs/')) return ['all', `job:${url.slice('/api/v2/jobs/'.length)}`]
  const page = /^\/api\/v1\?page=(\d+)$/.exec(url)
  if (page) return ['all', `v1:25:${page[1]}`]
  return ['all', 'lists']
}

interface ModeResult {
  name: string
  crawl: { urls: number; seconds: number; failed: number }
  steady: LoadResult & { hitRatio: number; backendPerSecond: number }
  rebuild: {
    buildSeconds: number
    changedJobs: number
    purgeSeconds?: number
    purgedTags?: number
    freshSeconds: number | undefined
    windowSeconds: number
    backendRequests: number
    purgedAskedAgain: number
    distinctAsked: number
    asked: number
  }
  outage?: { seconds: number; asked: number; failed: number; statuses: Record<string, number> }
}

async function runMode(
  o: CdnOptions,
  mode: 'purge' | 'ttl',
  settings: {
    dataDir: string
    distDir: string
    urls: string[]
    /** Slugs of the live jobs (closed or expired records are retitled too, but never served). */
    live: Set<string>
    revision: number
    lifetime: number
    window: number
    steadySeconds: number
    rate: number
    outage: number
    storage: string
  },
): Promise<ModeResult> {
  const { log } = o
  const env: Record<string, string> =
    mode === 'purge'
      ? { JOBSNAP_CDN_TTL: '86400' }
      : { JOBSNAP_CDN_TTL: '0', JOBSNAP_CACHE_TTL: String(settings.lifetime) }
  log(
    `cdn (${mode}): starting jobsnap (${Object.entries(env)
      .map(([k, v]) => `${k}=${v}`)
      .join(' ')}) and varnishd`,
  )
  let jobsnap: RunningServer = await startJobsnap(o.repoDir, settings.distDir, 300_000, 1, env)
  const edge = await startEdge(o, `varnish-${mode}`, jobsnap.port, settings.storage)
  const counters = () => varnishCounters(edge.workDir, COUNTERS)

  log(`cdn (${mode}): requesting all ${settings.urls.length.toLocaleString('en-US')} URLs once`)
  const crawled = await crawl(edge.port, settings.urls, 8)
  log(`  ${(crawled.ms / 1000).toFixed(1)} s, ${crawled.failed} failed`)

  log(`cdn (${mode}): Zipf load for ${settings.steadySeconds} s (autocannon, 10 connections)`)
  const before = counters()
  const steady = await runLoad({
    port: edge.port,
    nextPath: zipf(settings.urls, 31),
    connections: 10,
    seconds: settings.steadySeconds,
    headers: HEADERS,
  })
  const after = counters()
  const delta = (name: string) => after[name]! - before[name]!
  const lookups = delta('MAIN.cache_hit') + delta('MAIN.cache_miss') + delta('MAIN.s_pass')
  const steadyResult = {
    ...steady,
    hitRatio: lookups > 0 ? delta('MAIN.cache_hit') / lookups : Number.NaN,
    backendPerSecond: delta('MAIN.backend_req') / steady.seconds,
  }
  log(
    `  ${formatMs(steady.rps)} req/s, p50 ${formatMs(steady.p50)} ms, p99 ${formatMs(steady.p99)} ms; hit ratio ${(steadyResult.hitRatio * 100).toFixed(2)}%, ${steadyResult.backendPerSecond.toFixed(1)} req/s to jobsnap`,
  )

  log(`cdn (${mode}): paced Zipf load at ${settings.rate}/s, then a 1% rebuild`)
  const load = new PacedLoad(edge.port, zipf(settings.urls, 47), settings.rate, 8)
  await new Promise((resolve) => setTimeout(resolve, 2_000))
  const buildStart = performance.now()
  const changed = retitleOnePercent(path.join(settings.dataDir, 'jobs.ndjson'), settings.revision, settings.live)
  await runToEnd(
    'build',
    process.execPath,
    cliArgs('build', '--data', settings.dataDir, '--out', settings.distDir, '--quiet'),
    {
      cwd: o.repoDir,
    },
  )
  const published = performance.now()
  const atPublish = counters()
  const snapshotId = (
    JSON.parse(readFileSync(path.join(settings.distDir, CURRENT_LINK, snapshotPaths.manifest), 'utf8')) as {
      snapshot_id: string
    }
  ).snapshot_id
  log(`  built and published in ${((published - buildStart) / 1000).toFixed(1)} s (${snapshotId})`)

  let purgeSeconds: number | undefined
  let purgedTags: string[] | undefined
  if (mode === 'purge') {
    // As an operator runs it (`jobsnap build && jobsnap purge --wait-for <origin>`): the purge starts when the build
    // exits and waits itself until jobsnap serves the new snapshot, or the edge would fetch the old answers again.
    const t = performance.now()
    await runToEnd(
      'purge',
      process.execPath,
      cliArgs(
        'purge',
        '--dist',
        settings.distDir,
        '--varnish',
        `http://${LOOPBACK}:${edge.port}`,
        '--wait-for',
        `http://${LOOPBACK}:${jobsnap.port}`,
      ),
      { cwd: o.repoDir },
    )
    purgeSeconds = (performance.now() - t) / 1000
    purgedTags = readFileSync(path.join(settings.distDir, CURRENT_LINK, 'changed-tags.txt'), 'utf8')
      .split('\n')
      .filter(Boolean)
    log(`  purged ${purgedTags.length} tags in ${purgeSeconds.toFixed(2)} s`)
  }

  // Every changed job asked for until the edge answers its new title: a sweep over those still stale, several
  // in flight at once (one at a time, the probe's own round trips would be most of what it measures).
  const fresh = async (limitMs: number): Promise<number | undefined> => {
    const inFlight = 16
    const agent = new http.Agent({ keepAlive: true, maxSockets: inFlight })
    const pending = new Set(changed.slugs)
    const deadline = performance.now() + limitMs
    const ask = async (slug: string) => {
      const result = await fetchOnce(agent, edge.port, `/api/v2/jobs/${slug}`).catch(() => undefined)
      if (result?.status !== 200) return
      const body = result.body[0] === 0x1f ? gunzipSync(result.body) : result.body
      if ((JSON.parse(body.toString('utf8')) as { title: string }).title.endsWith(changed.marker)) pending.delete(slug)
    }
    while (pending.size > 0 && performance.now() < deadline) {
      const sweep = [...pending]
      await Promise.all(
        Array.from({ length: inFlight }, async (_, lane) => {
          for (let i = lane; i < sweep.length; i += inFlight) await ask(sweep[i]!)
        }),
      )
      if (pending.size > 0) await new Promise((resolve) => setTimeout(resolve, 100))
    }
    agent.destroy()
    return pending.size === 0 ? (performance.now() - buildStart) / 1000 : undefined
  }
  const freshSeconds = await fresh(settings.lifetime * 1000 * 2 + 30_000)
  log(
    `  every changed job fresh at the edge ${freshSeconds === undefined ? 'NOT within the limit' : `${freshSeconds.toFixed(1)} s after the build started`}`,
  )
  const windowEnd = published + settings.window * 1000
  const left = windowEnd - performance.now()
  if (left > 0) await new Promise((resolve) => setTimeout(resolve, left))
  const atWindowEnd = counters()
  const inWindow = load.between(published, windowEnd)
  const distinct = new Set(inWindow.map((entry) => entry.url))
  // The freshness check asked for every changed job too.
  for (const slug of changed.slugs) distinct.add(`/api/v2/jobs/${slug}`)
  const purged = new Set(purgedTags ?? [])
  const purgedAskedAgain =
    mode === 'purge' ? [...distinct].filter((url) => tagsOf(url).some((tag) => purged.has(tag))).length : 0

  let outage: ModeResult['outage']
  if (mode === 'ttl') {
    log(`cdn (${mode}): jobsnap stopped for ${settings.outage} s under the same load`)
    const from = performance.now()
    await stopChild(jobsnap.child, 0)
    await new Promise((resolve) => setTimeout(resolve, settings.outage * 1000))
    const to = performance.now()
    const during = load.between(from, to)
    const statuses: Record<string, number> = {}
    for (const entry of during) if (entry.status !== 200) statuses[entry.status] = (statuses[entry.status] ?? 0) + 1
    outage = {
      seconds: settings.outage,
      asked: during.length,
      failed: during.filter((entry) => entry.status !== 200).length,
      statuses,
    }
    log(`  ${outage.asked} requests, ${outage.failed} not 200`)
    // Back, so the edge's probe and the rest of the run see a normal origin again.
    jobsnap = await startJobsnap(o.repoDir, settings.distDir, 300_000, 1, env)
  }
  await load.stop()
  await stopChild(edge.child)
  await stopChild(jobsnap.child)

  return {
    name: mode,
    crawl: { urls: settings.urls.length, seconds: crawled.ms / 1000, failed: crawled.failed },
    steady: steadyResult,
    rebuild: {
      buildSeconds: (published - buildStart) / 1000,
      changedJobs: changed.slugs.length,
      purgeSeconds,
      purgedTags: purgedTags?.length,
      freshSeconds,
      windowSeconds: settings.window,
      backendRequests: atWindowEnd['MAIN.backend_req']! - atPublish['MAIN.backend_req']!,
      purgedAskedAgain,
      distinctAsked: distinct.size,
      asked: inWindow.length,
    },
    outage,
  }
}

const verdict = (met: boolean | undefined) => (met === undefined ? 'unknown' : met ? 'met' : 'MISSED')

export async function runCdn(o: CdnOptions): Promise<string> {
  const jobs = o.dataset.manifest.counts.live_jobs
  const title = `# jobsnap behind Varnish (--cdn${o.quick ? ' --quick' : ''}): ${jobs.toLocaleString('en-US')} live jobs`
  const missing = varnishMissing()
  if (missing) return `${title}\n\nNot run: ${missing}\n`

  const dataDir = path.join(o.workDir, 'cdn-data')
  const distDir = path.join(o.workDir, 'cdn-dist')
  // A private copy: the run edits the data and publishes snapshots; the bench's own dataset stays as it is.
  cpSync(o.dataset.dataDir, dataDir, { recursive: true })
  try {
    // Hard links: published snapshots are never written again (a build writes a new one beside them).
    await runToEnd('cp', 'cp', ['-al', o.dataset.distDir, distDir])
  } catch {
    o.log('cdn: no hard-linked copy of the snapshot here; building a private one')
    await runToEnd('build', process.execPath, cliArgs('build', '--data', dataDir, '--out', distDir, '--quiet'), {
      cwd: o.repoDir,
    })
  }
  const { urls, slugs } = universeOf(path.join(distDir, CURRENT_LINK), Math.max(200, Math.round(jobs / 10)), 5)
  const settings = {
    dataDir,
    distDir,
    urls,
    live: new Set(slugs),
    lifetime: o.quick ? 10 : 60,
    window: o.quick ? 10 : 60,
    steadySeconds: o.quick ? 3 : 10,
    rate: o.quick ? 300 : 1000,
    outage: o.quick ? 10 : 60,
    storage: o.quick ? '256m' : '1g',
  }
  const purge = await runMode(o, 'purge', { ...settings, revision: 1 })
  const ttl = await runMode(o, 'ttl', { ...settings, revision: 2 })

  const pct = (ratio: number) => `${(ratio * 100).toFixed(2)}%`
  // The targets are for the 100k-record dataset (some of its records are closed or expired: fewer live jobs).
  const at100k = o.dataset.spec.jobs >= 100_000
  const forTarget = (text: string) => (at100k ? text : `${text} (the target is for 100k; this run is not)`)
  const rebuildLine = (result: ModeResult) => {
    const r = result.rebuild
    return `${r.backendRequests.toLocaleString('en-US')} requests reached jobsnap in the ${r.windowSeconds} s after the publish, while ${r.asked.toLocaleString('en-US')} were asked at the edge (${r.distinctAsked.toLocaleString('en-US')} distinct URLs)`
  }
  const p = purge.rebuild
  const ratio = p.purgedAskedAgain > 0 ? p.backendRequests / p.purgedAskedAgain : Number.NaN
  const lines = [
    title,
    '',
    `Universe: ${urls.length.toLocaleString('en-US')} distinct URLs (every single job, every v1 page of 25, ${(urls.length - jobs - Math.ceil(jobs / 25)).toLocaleString('en-US')} list queries), asked for by Zipf rank (s = ${ZIPF_S}) with \`Accept-Encoding: gzip\`. Varnish ${settings.storage} malloc, edge limits raised; jobsnap one process, limits raised. Load generator, Varnish, jobsnap and the builds share this machine's cores.`,
    o.quick
      ? `Quick mode: ${settings.lifetime} s lifetime (JOBSNAP_CACHE_TTL) and ${settings.window} s windows instead of 60 s, a ${settings.outage} s outage, so the code path runs; the targets are for 100k and a minute.`
      : 'Targets are printed, never asserted.',
    '',
    `## Shared lifetime of a day (JOBSNAP_CDN_TTL=86400) and \`jobsnap purge --varnish\` after the publish`,
    '',
    `- Every URL asked for once: ${purge.crawl.seconds.toFixed(1)} s (${purge.crawl.failed} failed).`,
    `- Steady state, ${purge.steady.seconds} s of autocannon (10 connections): edge hit ratio ${pct(purge.steady.hitRatio)} (${forTarget(`target ≥ 99%: ${verdict(purge.steady.hitRatio >= 0.99)}`)}); ${purge.steady.backendPerSecond.toFixed(1)} requests/s reached jobsnap; at the edge ${formatMs(purge.steady.rps)} req/s, p50 ${formatMs(purge.steady.p50)} ms, p99 ${formatMs(purge.steady.p99)} ms, ${purge.steady.errors} errors.`,
    `- 1% rebuild (every hundredth job record retitled, ${p.changedJobs} of them live) under ${settings.rate} req/s of Zipf load: build and publish ${p.buildSeconds.toFixed(1)} s, then \`jobsnap purge --wait-for\` of ${p.purgedTags} tags ${p.purgeSeconds?.toFixed(2)} s (its wait for jobsnap to serve the new snapshot included); ${rebuildLine(purge)}; purged objects asked for again: ${p.purgedAskedAgain.toLocaleString('en-US')}; ratio ${Number.isFinite(ratio) ? ratio.toFixed(2) : '?'} (target ≤ 2: ${verdict(Number.isFinite(ratio) ? ratio <= 2 : undefined)}).`,
    `- From \`jobsnap build\` starting to every changed job served fresh at the edge: ${p.freshSeconds === undefined ? 'not within the limit' : `${p.freshSeconds.toFixed(1)} s`} (${forTarget(`target ≤ 10 s: ${verdict(p.freshSeconds === undefined ? false : p.freshSeconds <= 10)}`)}).`,
    '',
    `## Only the ${settings.lifetime} s lifetime (JOBSNAP_CDN_TTL=0), no purge`,
    '',
    `- Every URL asked for once: ${ttl.crawl.seconds.toFixed(1)} s (${ttl.crawl.failed} failed).`,
    `- Same load, ${ttl.steady.seconds} s: edge hit ratio ${pct(ttl.steady.hitRatio)}; ${ttl.steady.backendPerSecond.toFixed(1)} requests/s reached jobsnap; at the edge ${formatMs(ttl.steady.rps)} req/s, p50 ${formatMs(ttl.steady.p50)} ms, p99 ${formatMs(ttl.steady.p99)} ms.`,
    `- The same 1% rebuild: build and publish ${ttl.rebuild.buildSeconds.toFixed(1)} s; ${rebuildLine(ttl)} (against ${p.backendRequests.toLocaleString('en-US')} with the purge).`,
    `- From \`jobsnap build\` starting to every changed job served fresh at the edge: ${ttl.rebuild.freshSeconds === undefined ? 'not within the limit' : `${ttl.rebuild.freshSeconds.toFixed(1)} s`} (waiting out the lifetime).`,
    `- jobsnap stopped for ${ttl.outage!.seconds} s under the same paced load: ${ttl.outage!.asked.toLocaleString('en-US')} requests, ${ttl.outage!.failed} not 200${
      ttl.outage!.failed
        ? ` (${Object.entries(ttl.outage!.statuses)
            .map(([k, v]) => `${k}: ${v}`)
            .join(', ')})`
        : ''
    } (every URL asked for is cached; target 0: ${verdict(ttl.outage!.failed === 0)}).`,
    '',
    'Requests reaching jobsnap are varnishstat\'s MAIN.backend_req (background refreshes included, health probes not); hit ratio is MAIN.cache_hit over hits, misses and passes. "Purged objects asked for again": distinct URLs asked for in the window (by the load or the freshness check) whose answer carries a purged tag.',
  ]
  return `${lines.join('\n')}\n`
}
