/**
 * Incremental builds (docs/data.md): unchanged public files are
 * hard-linked from the published snapshot; a changed job rewrites its v2 file
 * and the v1 pages it sits on, and `changed-paths.txt` lists exactly the
 * public paths whose content changed, plus the documented entries for
 * responses computed per query.
 */
import { readFile, stat } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type BuildResult, CHANGED_PATHS_FILE } from '../../build/index.ts'
import { PRECOMPUTED_V1_LIMITS, snapshotPaths } from '../../core/index.ts'
import type { RunningServer } from '../../runtime/index.ts'
import { startFixtureServer } from '../support/fixtures.ts'
import {
  build,
  createDataset,
  editJobs,
  readJobIndex,
  readSnapshotFile,
  type RefreshDataset,
  snapshotFilePath,
} from './support/dataset.ts'
import { get, header } from './support/http.ts'

const DEFAULT_LIMIT = 25
/** Entries for responses computed per query (v2 lists, v1 pages of other sizes), listed whenever a job file or v1 page changes. */
const COMPUTED_ENTRIES = [
  '/api/v2/jobs',
  '/api/v2/jobs?*',
  '/api/v1?*',
  '/api/v2/companies',
  '/api/v2/companies?*',
  '/api/v2/companies/*',
  '/api/v2/filters',
  '/api/v2/filters?*',
  '/feeds/jobs.rss',
  '/feeds/jobs.rss?*',
  '/feeds/jobs.atom',
  '/feeds/jobs.atom?*',
  '/feeds/jobs.json',
  '/feeds/jobs.json?*',
  '/api/v2/changes?*',
]

/** Every way to ask for one v1 page: each parameter given or left at its default (page 1, limit 25), in either order. */
function v1Spellings(limit: number, page: number): string[] {
  const pageParts = page === 1 ? [undefined, 'page=1'] : [`page=${page}`]
  const limitParts = limit === DEFAULT_LIMIT ? [undefined, `limit=${DEFAULT_LIMIT}`] : [`limit=${limit}`]
  const out: string[] = []
  for (const p of pageParts) {
    for (const l of limitParts) {
      const parts = [p, l].filter((x): x is string => x !== undefined)
      if (parts.length === 0) out.push('/api/v1')
      else if (parts.length === 1) out.push(`/api/v1?${parts[0]}`)
      else out.push(`/api/v1?${parts[0]}&${parts[1]}`, `/api/v1?${parts[1]}&${parts[0]}`)
    }
  }
  return out
}

let dataset: RefreshDataset
let clock = Date.now()
const nextNow = () => {
  clock += 60_000
  return new Date(clock)
}

beforeAll(async () => {
  dataset = await createDataset({ prefix: 'incremental', jobs: 300, companies: 40 })
})

afterAll(async () => {
  await dataset?.cleanup()
})

async function changedPathsOf(result: BuildResult): Promise<string[]> {
  const text = await readFile(path.join(result.snapshotDir, CHANGED_PATHS_FILE), 'utf8')
  expect(text === '' || text.endsWith('\n')).toBe(true)
  return text.split('\n').filter((line) => line !== '')
}

/** Public files of a snapshot with their compressed copies (only the OpenAPI document has them). */
function publicFiles(result: BuildResult): string[] {
  return [...result.files.keys()].flatMap((file) =>
    file === snapshotPaths.openapi ? [file, `${file}.br`, `${file}.gz`] : [file],
  )
}

/** A public file's inode, a job file's looked up through the snapshot's layers (its base's when it is there). */
async function inode(result: BuildResult, file: string): Promise<number> {
  return (await stat(await snapshotFilePath(dataset.distDir, result.snapshotId, file))).ino
}

describe('incremental build', () => {
  let previous: BuildResult

  it('with nothing changed writes no public file and lists nothing to purge', async () => {
    await build(dataset, { now: nextNow() })
    const first = await build(dataset, { now: nextNow() })
    previous = await build(dataset, { now: nextNow() })
    expect(previous.snapshotId).not.toBe(first.snapshotId)
    expect(previous.filesRewritten).toBe(0)
    expect(previous.filesReused + previous.jobFilesInBase).toBe(previous.files.size)
    expect(previous.changes).toEqual({ added: [], changed: [], removed: [], purge: [] })
    expect(await changedPathsOf(previous)).toEqual([])
    for (const file of publicFiles(previous)) expect(await inode(previous, file), file).toBe(await inode(first, file))
  })

  // Position in date order: 3 sits on page 1 of both precomputed sizes, 130 on page 6 of 25 and page 2 of 100.
  it.each([3, 130])(
    'after one job (date position %i) changes, rewrites its file and its v1 pages only, hard-links the rest, and lists exactly those paths',
    async (position) => {
      const before = previous
      const index = await readJobIndex(dataset.distDir, before.snapshotId)
      const job = index.jobs[position]!
      await editJobs(dataset.dataDir, (jobs) => {
        const record = jobs.find((j) => j.id === job.id)!
        record.title = `${record.title} (edited)`
      })
      const next = await build(dataset, { now: nextNow() })
      previous = next

      const pages = PRECOMPUTED_V1_LIMITS.map((limit) => ({ limit, page: Math.floor(position / limit) + 1 }))
      // The jobs' bulk exports hold the job too; the companies' export does not change (it is hard-linked).
      const exportFiles = ['exports/jobs.ndjson.gz', 'exports/jobs.parquet']
      const changedFiles = [
        snapshotPaths.v2Job(job.slug),
        ...pages.map(({ limit, page }) => snapshotPaths.v1Page(limit, page)),
        ...exportFiles,
      ].sort()
      expect({
        added: next.changes.added,
        changed: [...next.changes.changed].sort(),
        removed: next.changes.removed,
      }).toEqual({ added: [], changed: changedFiles, removed: [] })
      expect(next.filesRewritten).toBe(changedFiles.length)
      expect(next.filesReused + next.jobFilesInBase).toBe(next.files.size - changedFiles.length)

      // Unchanged files are the previous snapshot's inodes; changed ones are new files.
      const rewritten = new Set(changedFiles)
      for (const file of publicFiles(next)) {
        const [ino, previousIno] = [await inode(next, file), await inode(before, file)]
        if (rewritten.has(file)) expect(ino, `${file} was rewritten`).not.toBe(previousIno)
        else expect(ino, `${file} is a hard link to the previous snapshot's`).toBe(previousIno)
      }

      // changed-paths.txt: the job, every spelling of its v1 pages, the computed entries; nothing else, nothing twice.
      const listed = await changedPathsOf(next)
      expect(new Set(listed).size, 'no duplicates').toBe(listed.length)
      const expected = [
        `/api/v2/jobs/${job.slug}`,
        ...pages.flatMap(({ limit, page }) => v1Spellings(limit, page)),
        ...exportFiles.map((file) => `/api/v2/${file}`),
        '/api/v2/exports',
        ...COMPUTED_ENTRIES,
      ]
      expect([...listed].sort()).toEqual([...expected].sort())
      expect(next.changes.purge).toEqual(listed)
      // index/changes.json, the change feed's link: the one job, by slug, against the snapshot built over.
      const jobChanges = JSON.parse(await readFile(path.join(next.snapshotDir, 'index/changes.json'), 'utf8'))
      expect(jobChanges).toEqual({
        previous: before.snapshotId,
        added: [],
        updated: [job.slug],
        removed: [],
        hashes: {
          [job.slug]: [before.files.get(snapshotPaths.v2Job(job.slug)), next.files.get(snapshotPaths.v2Job(job.slug))],
        },
      })

      // Each listed concrete path really serves changed content: the new snapshot's file, unlike the previous one's.
      const server: RunningServer = await startFixtureServer(dataset.distDir, { JOBSNAP_REST_LIMIT: 1_000_000 }, () =>
        Date.now(),
      )
      try {
        for (const urlPath of listed.filter((p) => !COMPUTED_ENTRIES.includes(p) && p !== '/api/v2/exports')) {
          const file = urlPath.startsWith('/api/v2/jobs/')
            ? snapshotPaths.v2Job(job.slug)
            : urlPath.startsWith('/api/v2/exports/')
              ? urlPath.slice('/api/v2/'.length)
              : snapshotPaths.v1Page(
                  ...((): [number, number] => {
                    const params = new URL(urlPath, 'http://x').searchParams
                    return [Number(params.get('limit') ?? DEFAULT_LIMIT), Number(params.get('page') ?? 1)]
                  })(),
                )
          const response = await get(`${server.url}${urlPath}`)
          expect(response.status, urlPath).toBe(200)
          expect(header(response, 'x-snapshot-id')).toBe(next.snapshotId)
          expect(
            response.body.equals(await readSnapshotFile(dataset.distDir, next.snapshotId, file)),
            `${urlPath} serves ${file}`,
          ).toBe(true)
          expect(
            response.body.equals(await readSnapshotFile(dataset.distDir, before.snapshotId, file)),
            `${urlPath} changed`,
          ).toBe(false)
        }
      } finally {
        await server.close()
      }
    },
  )
})
