/** Command-line front of the build and the generator: exit codes and readable reports. */
import type { Config } from '../core/config.ts'
import path from 'node:path'
import { CHANGED_PATHS_FILE, CHANGED_TAGS_FILE } from './changed-files.ts'
import { type PurgeRequest, runPurge } from './purge.ts'
import type { GenerateOptions } from './generate.ts'
import { DatasetInvalidError, formatIssue } from './issues.ts'
import { createProgress } from './progress.ts'

export async function runBuildCommand(config: Config, options: { now?: Date; quiet?: boolean }): Promise<number> {
  const progress = createProgress(process.stderr, options.quiet === true)
  // Loaded here, not at the top: `jobsnap purge` and `rollback` start without the whole build.
  const { buildSnapshot } = await import('./build.ts')
  try {
    const result = await buildSnapshot({
      dataDir: config.JOBSNAP_DATA,
      distDir: config.JOBSNAP_DIST,
      siteUrl: config.JOBSNAP_SITE_URL,
      keepSnapshots: config.JOBSNAP_KEEP_SNAPSHOTS,
      jobDeltaMaxPercent: config.JOBSNAP_JOB_DELTA_MAX_PERCENT,
      now: options.now,
      progress,
    })
    const { counts } = result.manifest
    const { changes } = result
    console.log(
      `published snapshot ${result.snapshotId}: ${counts.live_jobs} live jobs (${counts.closed_jobs} closed, ${counts.expired_jobs} expired left out), ${counts.companies} companies, in ${(result.durationMs / 1000).toFixed(1)} s -> ${result.snapshotDir}`,
    )
    console.log(
      `changes: ${changes.added.length} files added, ${changes.changed.length} changed, ${changes.removed.length} removed (${result.filesRewritten} written, ${result.filesReused} reused${result.jobBase === undefined ? '; job files: a full layer' : `; job files: a delta over ${result.jobBase}, ${result.jobFilesInBase} left there, ${result.jobWhiteouts} whiteouts written`}); ${result.recordsReused} of ${counts.records_jobs} job records reused from the previous build; ${changes.purge.length} paths to purge listed in ${path.join(result.snapshotDir, CHANGED_PATHS_FILE)}, ${result.changedTags.length} cache tags in ${CHANGED_TAGS_FILE} (send them with jobsnap purge)`,
    )
    console.log(
      `exports: ${Math.round(result.exportsMs)} ms of the build's own thread; ${result.exportMembersReused} of ${result.exportMembers} gzip members of jobs.ndjson.gz and ${result.parquetChunksReused} of ${result.parquetChunks} column chunks of jobs.parquet copied from the previous snapshot`,
    )
    const usage = process.resourceUsage()
    // CPU of every thread of this process: where its system time goes is what huge pages change (bin/huge-pages.mjs).
    console.log(
      `peak RSS ${Math.round(usage.maxRSS / 1024)} MB; CPU ${(usage.userCPUTime / 1e6).toFixed(1)} s user, ${(usage.systemCPUTime / 1e6).toFixed(1)} s system; huge pages ${process.env.GLIBC_TUNABLES?.includes('glibc.malloc.hugetlb=1') ? 'on' : 'off'}`,
    )
    return 0
  } catch (error) {
    progress.done()
    if (error instanceof DatasetInvalidError) {
      console.error(
        `build failed: ${error.issues.length} problem${error.issues.length === 1 ? '' : 's'} in ${config.JOBSNAP_DATA}; nothing was published.`,
      )
      for (const issue of error.issues) console.error(`  ${formatIssue(issue)}`)
      return 1
    }
    console.error(`build failed: ${(error as Error).message}; nothing was published.`)
    return 2
  }
}

export async function runGenerateCommand(options: GenerateOptions): Promise<number> {
  for (const key of ['jobs', 'companies', 'seed'] as const) {
    if (!Number.isSafeInteger(options[key]) || options[key] < (key === 'seed' ? 0 : 1)) {
      console.error(`--${key} must be a whole number${key === 'seed' ? '' : ' of at least 1'}; got ${options[key]}`)
      return 1
    }
  }
  const progress = createProgress()
  // Loaded here, not at the top: faker is large, and a build never needs it.
  const { generateDataset } = await import('./generate.ts')
  const result = await generateDataset({
    ...options,
    onProgress: (done, total) => progress.step('generating jobs', done, total, 'jobs'),
  })
  progress.done()
  console.log(`wrote ${result.jobs} jobs and ${result.companies} companies to ${options.outDir} (seed ${options.seed})`)
  return 0
}

export async function runRollbackCommand(config: Config): Promise<number> {
  try {
    const { rollbackSnapshot } = await import('./publish.ts')
    const { from, to } = await rollbackSnapshot(config.JOBSNAP_DIST)
    console.log(
      `rolled back ${config.JOBSNAP_DIST}/current from ${from ?? '(none)'} to ${to}; running servers follow it (or send SIGHUP).`,
    )
    return 0
  } catch (error) {
    console.error(`rollback failed: ${(error as Error).message}`)
    return 1
  }
}

export async function runPurgeCommand(config: Config, request: PurgeRequest): Promise<number> {
  return runPurge(config, request, process.env, {
    out: (line) => console.log(line),
    err: (line) => console.error(line),
  })
}
