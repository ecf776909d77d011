/**
 * Refresh to live: the seconds from the start of an incremental build to
 * every worker of a running server answering from the snapshot it published,
 * as one figure (build and publish, then each worker noticing `current`,
 * loading and swapping). The server runs the whole time, as in production.
 *
 *   npx tsx bench/refresh.ts DIST --data DIR [--workers N]
 *
 * DIST must already hold a published snapshot; DIR is the dataset to build
 * over it (for a 1% refresh, the dataset the snapshot was built from with 1%
 * of its records changed: `npm run bench -- --rebuild` leaves `.bench/dist-<size>`
 * built from `.bench/data-<size>-retitled`, so `--data .bench/data-<size>` is one).
 * Which workers serve what is read from `/metrics`: `jobsnap_snapshot_info`
 * carries one `snapshot_id` label per snapshot any worker serves, so the
 * refresh is live when the published id is the only one left.
 */
import { readFileSync } from 'node:fs'
import http from 'node:http'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { CURRENT_LINK, publishedSnapshotId, type SnapshotManifest, snapshotPaths } from '../core/index.ts'
import { LOOPBACK } from '../support/processes.ts'
import { cliArgs, settledDist } from './datasets.ts'
import { installExitHooks, runToEnd, stopChild } from './procs.ts'
import { startJobsnap } from './servers.ts'

export interface RefreshResult {
  workers: number
  /** `jobsnap build` started to it exiting, the snapshot published. */
  buildSeconds: number
  /** Build start to the last worker answering from the new snapshot. */
  liveSeconds: number
  /** What the build printed about its passes (its last lines). */
  buildOutput: string
  snapshotId: string
  /** Job records in the dataset built (the 45 s target is for a million). */
  records: number
}

/** The snapshot ids the cluster's workers serve now, from one /metrics scrape. */
function servedSnapshotIds(port: number): Promise<Set<string>> {
  return new Promise((resolve, reject) => {
    const request = http.get({ host: LOOPBACK, port, path: '/metrics', timeout: 10_000 }, (response) => {
      const chunks: Buffer[] = []
      response.on('data', (chunk: Buffer) => chunks.push(chunk))
      response.on('end', () => {
        const ids = new Set<string>()
        for (const match of Buffer.concat(chunks)
          .toString('utf8')
          .matchAll(/^jobsnap_snapshot_info\{snapshot_id="([^"]+)"\} 1$/gm))
          ids.add(match[1]!)
        resolve(ids)
      })
    })
    request.on('timeout', () => request.destroy(new Error('/metrics did not answer within 10 s')))
    request.on('error', reject)
  })
}

/** Starts a server on `distDir`, builds `dataDir` over it and times the refresh until every worker serves it. */
export async function measureRefresh(options: {
  repoDir: string
  distDir: string
  dataDir: string
  workers: number
  log: (line: string) => void
}): Promise<RefreshResult> {
  const { repoDir, distDir, dataDir, workers, log } = options
  const server = await startJobsnap(repoDir, distDir, 900_000, workers)
  try {
    const before = await publishedSnapshotId(distDir)
    log(
      `refresh: ${workers} worker(s) serving ${before} (ready in ${(server.readyMs / 1000).toFixed(2)} s); building ${dataDir}`,
    )
    const waited = await settledDist(distDir)
    if (waited > 0) log(`refresh: waited ${waited} s for an earlier build's pruned snapshot to be deleted`)
    const started = performance.now()
    let built: number | undefined
    const building = runToEnd('build', process.execPath, cliArgs('build', '--data', dataDir, '--out', distDir), {
      cwd: repoDir,
      env: { ...process.env, JOBSNAP_LOG: 'silent' },
    }).finally(() => {
      built = performance.now()
    })
    // Watched while the build runs: the workers may serve the new snapshot before the build has exited (it
    // goes on after publishing), and live is when they do. /metrics is asked only once `current` has moved.
    const watching = (async () => {
      for (;;) {
        const named = await publishedSnapshotId(distDir)
        if (named !== undefined && named !== before) {
          const served = await servedSnapshotIds(server.port)
          if (served.size === 1 && served.has(named)) return { id: named, at: performance.now() }
          if (built !== undefined && performance.now() - built > 600_000)
            throw new Error(`workers still serve ${[...served].join(', ')} 10 min after the build`)
        } else if (built !== undefined) return undefined // exited without publishing
        await new Promise((resolve) => setTimeout(resolve, 25))
      }
    })()
    const [build, live] = await Promise.all([building, watching])
    if (live === undefined) throw new Error(`the build published nothing new:\n${build.output}`)
    const after = live.id
    return {
      workers,
      buildSeconds: (built! - started) / 1000,
      liveSeconds: (live.at - started) / 1000,
      buildOutput: build.output,
      snapshotId: after,
      records: (
        JSON.parse(readFileSync(path.join(distDir, CURRENT_LINK, snapshotPaths.manifest), 'utf8')) as SnapshotManifest
      ).counts.records_jobs,
    }
  } finally {
    await stopChild(server.child)
  }
}

/** The report line: the figure, and at 1M its target. */
export function describeRefresh(result: RefreshResult): string {
  const target =
    result.records >= 1_000_000
      ? `; target ≤ 45 s: ${result.liveSeconds <= 45 ? 'met' : 'MISSED'}`
      : ' (the target, ≤ 45 s, is for 1M)'
  const after = result.liveSeconds - result.buildSeconds
  const tail =
    after >= 0
      ? `the build ran ${result.buildSeconds.toFixed(1)} s and the workers served the new snapshot ${after.toFixed(1)} s after it exited`
      : `the workers served the new snapshot ${(-after).toFixed(1)} s before the build exited (${result.buildSeconds.toFixed(1)} s; it goes on after publishing)`
  return `Refresh to live (a 1% rebuild under a running \`--workers ${result.workers}\` server, from \`jobsnap build\` starting to every worker serving the new snapshot): ${result.liveSeconds.toFixed(1)} s; ${tail}${target}.`
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { parseArgs } = await import('node:util')
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { data: { type: 'string' }, workers: { type: 'string', default: '2' } },
  })
  const workers = Number(values.workers)
  if (positionals[0] === undefined || values.data === undefined || !Number.isInteger(workers) || workers < 1) {
    console.error('usage: npx tsx bench/refresh.ts DIST --data DIR [--workers N]   (N a whole number, default 2)')
    process.exit(2)
  }
  installExitHooks()
  const result = await measureRefresh({
    repoDir: process.cwd(),
    distDir: path.resolve(positionals[0]),
    dataDir: path.resolve(values.data),
    workers,
    log: (line) => console.error(line),
  })
  console.log(result.buildOutput.trim().split('\n').slice(-6).join('\n'))
  console.log(describeRefresh(result))
  process.exit(0)
}
