/**
 * One built snapshot under wrk, without the rest of the bench: spawn to
 * ready and RSS, then the uncached random mix (8 connections; then again
 * with `Accept-Encoding: gzip, br`, as CDNs send), the worst
 * query (one connection) and random single jobs, 10 s each after a 2 s
 * warm-up, then the server's GC figures from /health. For sizes the full
 * bench makes slow to reach (a 1M-job snapshot built by hand), or any
 * snapshot an operator wants to check.
 *
 *   npx tsx bench/dist-load.ts [distDir] [--workers N] [--compare DIR]
 *
 * `--compare DIR` serves the same snapshot from another checkout of the code
 * too (its node_modules installed or linked), both servers up at once, and
 * runs each scenario on one then the other, then the other way round, 5 s
 * each after the warm-up, printing both and their ratio: figures from one run under the
 * same load, which is what "no worse than before" can be judged on. The v1
 * page scenario (random pages of 25) is added then.
 *
 * Needs Debian's wrk. Same caveat as the bench: wrk and the server share
 * this machine's cores.
 */
import { mkdtempSync, realpathSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { LOOPBACK } from '../support/processes.ts'
import { installExitHooks, killAll, stopChild } from './procs.ts'
import { formatMs } from './report.ts'
import { clusterFacts, rssOf, startJobsnap } from './servers.ts'
import { findWrk, runWrk, WRK_INSTALL } from './wrk.ts'
import { jobsnapListPath, loadVocabulary, pick, prng, randomListQuery, worstQueryVariant } from './workload.ts'

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { workers: { type: 'string', default: '1' }, compare: { type: 'string' } },
})
const distDir = positionals[0] ?? '.bench/dist-100k'
const workers = Number(values.workers)
const wrk = findWrk()
if (!wrk) {
  console.error(`wrk not found; install it with: ${WRK_INSTALL}`)
  process.exit(2)
}

installExitHooks()
const workDir = mkdtempSync(path.join(os.tmpdir(), 'jobsnap-dist-load-'))
if (values.compare) {
  await compare(path.resolve(values.compare))
  rmSync(workDir, { recursive: true, force: true })
  killAll()
  process.exit(0)
}
const server = await startJobsnap(path.resolve(import.meta.dirname, '..'), distDir, 900_000, workers)
const facts = clusterFacts(server)
console.log(
  `${distDir}: ready ${(server.readyMs / 1000).toFixed(2)} s after spawn, RSS ${facts ? `${facts.rssMbTotal} MB (primary and ${workers} workers)` : `${rssOf(server)?.rssMb.toFixed(0) ?? '?'} MB`}`,
)
const vocabulary = loadVocabulary(realpathSync(path.join(distDir, 'current')))
const random = prng(11)
const randomList = () => jobsnapListPath(randomListQuery(random, vocabulary))
const scenarios: [string, () => string, number, string?][] = [
  ['v2 uncached random mix, 8 connections', randomList, 8],
  ['v2 uncached random mix, 8 connections, Accept-Encoding: gzip, br', randomList, 8, 'gzip, br'],
  ['v2 worst query, 1 connection', () => jobsnapListPath(worstQueryVariant(random)), 1],
  ['single job by slug, 8 connections', () => `/api/v2/jobs/${pick(random, vocabulary.slugs)}`, 8],
]
for (const [name, next, connections, acceptEncoding] of scenarios) {
  const paths = (length: number) => Array.from({ length }, next)
  await runWrk({ wrk, port: server.port, paths: paths(3000), connections, seconds: 2, acceptEncoding, workDir })
  const r = await runWrk({
    wrk,
    port: server.port,
    paths: paths(60_000),
    connections,
    seconds: 10,
    acceptEncoding,
    workDir,
  })
  console.log(
    `${name}: ${Math.round(r.rps)} req/s, p50 ${formatMs(r.p50)} ms, p99 ${formatMs(r.p99)} ms, max ${formatMs(r.max)} ms, ${r.errors} errors`,
  )
}
const health = (await (await fetch(`http://${LOOPBACK}:${server.port}/health`)).json()) as {
  gc?: { longest_pause_ms: number; collections: number }
}
console.log(
  `GC since ready: ${health.gc?.collections ?? '?'} collections, longest pause ${formatMs(health.gc?.longest_pause_ms)} ms; RSS now ${rssOf(server)?.rssMb.toFixed(0) ?? '?'} MB`,
)
await stopChild(server.child)
rmSync(workDir, { recursive: true, force: true })
killAll()
process.exit(0)

/** The scenarios on this checkout's server and on `otherDir`'s, taking turns; prints each and the ratio. */
async function compare(otherDir: string): Promise<void> {
  const here = path.resolve(import.meta.dirname, '..')
  const servers = [
    { name: 'this checkout', server: await startJobsnap(here, distDir, 900_000, workers) },
    { name: `compare (${otherDir})`, server: await startJobsnap(otherDir, distDir, 900_000, workers) },
  ]
  for (const { name, server } of servers)
    console.log(
      `${name}: ready ${(server.readyMs / 1000).toFixed(2)} s after spawn, RSS ${rssOf(server)?.rssMb.toFixed(0)} MB`,
    )
  const vocabulary = loadVocabulary(realpathSync(path.join(distDir, 'current')))
  const random = prng(11)
  const scenarios: [string, () => string, number][] = [
    ['single job by slug, 8 connections', () => `/api/v2/jobs/${pick(random, vocabulary.slugs)}`, 8],
    ['v1 page (25 jobs), 8 connections', () => `/api/v1?page=${1 + Math.floor(random() * vocabulary.v1Pages)}`, 8],
    ['v2 uncached random mix, 8 connections', () => jobsnapListPath(randomListQuery(random, vocabulary)), 8],
  ]
  for (const [scenario, next, connections] of scenarios) {
    const runs: { rps: number; p99: number }[][] = [[], []]
    for (let round = 0; round < 2; round++) {
      // A B, then B A: in two runs each way round at 1M, whichever server went second in a pair did
      // better (ratios 0.79-0.92 against it, both directions), so each takes each turn once.
      for (const i of round === 0 ? [0, 1] : [1, 0]) {
        const { server } = servers[i]!
        // Fresh paths each run: an uncached list stays uncached.
        const paths = (length: number) => Array.from({ length }, next)
        await runWrk({ wrk: wrk!, port: server.port, paths: paths(3000), connections, seconds: 2, workDir })
        const r = await runWrk({ wrk: wrk!, port: server.port, paths: paths(40_000), connections, seconds: 5, workDir })
        runs[i]!.push({ rps: r.rps, p99: r.p99 })
      }
    }
    const mean = (list: { rps: number }[]) => list.reduce((sum, r) => sum + r.rps, 0) / list.length
    const [mine, theirs] = [mean(runs[0]!), mean(runs[1]!)]
    const show = (list: { rps: number; p99: number }[]) =>
      list.map((r) => `${Math.round(r.rps)} req/s p99 ${formatMs(r.p99)} ms`).join(', ')
    console.log(
      `${scenario}: this checkout ${show(runs[0]!)}; compare ${show(runs[1]!)}; mean ratio ${(mine / theirs).toFixed(3)}`,
    )
  }
  for (const { server } of servers) await stopChild(server.child)
}
