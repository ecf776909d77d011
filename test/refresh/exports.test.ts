/**
 * The bulk exports (docs/api.md: Bulk exports) over real builds and a real
 * server: each line of jobs.ndjson.gz is the single-job body, each line of
 * companies.ndjson.gz the company's; the files answer HEAD, ranges, If-Range
 * and If-None-Match; jobs.parquet is queried in place over HTTP with range
 * requests (hyparquet, a reader other than the writer) reading a small part
 * of it; a download interrupted and resumed yields the exact file, or the
 * whole new one when a snapshot was published in between; and the mirror
 * recipe (export, then the change feed) ends equal to the API, job for job.
 */
import { createHash } from 'node:crypto'
import { cp, rm, truncate } from 'node:fs/promises'
import path from 'node:path'
import { gunzipSync } from 'node:zlib'
import { asyncBufferFromUrl, parquetMetadataAsync, parquetQuery } from 'hyparquet'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type BuildResult, buildSnapshot, createProgress } from '../../build/index.ts'
import { V2ExportsResponse } from '../../core/index.ts'
import { createFileCache, loadSnapshot, type RunningServer } from '../../runtime/index.ts'
import { startFixtureServer } from '../support/fixtures.ts'
import { createDataset, editJobs, type RefreshDataset } from './support/dataset.ts'

let dataset: RefreshDataset
let server: RunningServer
let clock = Date.parse('2026-11-20T00:00:00Z')

async function build(): Promise<BuildResult> {
  clock += 60_000
  return buildSnapshot({
    dataDir: dataset.dataDir,
    distDir: dataset.distDir,
    siteUrl: 'https://jobsnap.example',
    now: new Date(clock),
    keepSnapshots: 5,
    // Small row groups, so that this small dataset has many, as a large one has.
    parquetRowGroupRows: 200,
    progress: createProgress(process.stderr, true),
  })
}

async function publish(): Promise<BuildResult> {
  const result = await build()
  await server.reload()
  return result
}

const get = (path: string, headers: Record<string, string> = {}, method = 'GET') =>
  fetch(`${server.url}${path}`, { headers, method })

async function exportsIndex(): Promise<V2ExportsResponse> {
  const response = await get('/api/v2/exports')
  expect(response.status).toBe(200)
  return V2ExportsResponse.parse(await response.json())
}

async function download(path: string, headers: Record<string, string> = {}) {
  const response = await get(path, headers)
  return { response, bytes: Buffer.from(await response.arrayBuffer()) }
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex')

/** Every live job's slug in the list's default order, paged through. */
async function listedSlugs(): Promise<string[]> {
  const slugs: string[] = []
  for (let page = 1; ; page++) {
    const body = (await (await get(`/api/v2/jobs?limit=100&page=${page}`)).json()) as {
      data: { slug: string }[]
      has_more: boolean
    }
    slugs.push(...body.data.map((job) => job.slug))
    if (!body.has_more) return slugs
  }
}

beforeAll(async () => {
  dataset = await createDataset({ prefix: 'exports', jobs: 1200, companies: 30, seed: 37 })
  await build()
  server = await startFixtureServer(dataset.distDir, { JOBSNAP_REST_LIMIT: 1_000_000 }, () => Date.now())
}, 120_000)

afterAll(async () => {
  await server?.close()
  await dataset?.cleanup()
})

describe('the exports index and files', () => {
  it('lists the three files with their size, rows and SHA-256, and serves exactly those bytes', async () => {
    const index = await exportsIndex()
    const health = (await (await get('/health')).json()) as { snapshot_id: string; live_jobs: number }
    expect(index.snapshot_id).toBe(health.snapshot_id)
    expect(index.files.map((file) => file.name)).toEqual(['jobs.ndjson.gz', 'companies.ndjson.gz', 'jobs.parquet'])
    for (const file of index.files) {
      const { response, bytes } = await download(file.url, { 'accept-encoding': 'gzip, br' })
      expect(response.status).toBe(200)
      expect(response.headers.get('content-type')).toBe(file.content_type)
      expect(response.headers.get('content-encoding'), 'the stored file, as it is').toBeNull()
      expect(response.headers.get('etag')).toBe(`"${file.sha256}"`)
      expect(response.headers.get('x-snapshot-id')).toBe(index.snapshot_id)
      expect(response.headers.get('accept-ranges')).toBe('bytes')
      expect(response.headers.get('last-modified')).toBe(new Date(index.built_at).toUTCString())
      expect(response.headers.get('cache-control')).toMatch(/^public, max-age=\d+$/)
      expect(bytes.length).toBe(file.bytes)
      expect(sha256(bytes)).toBe(file.sha256)
    }
    expect(index.files[0]!.rows).toBe(health.live_jobs)
    expect(index.files[2]!.rows).toBe(health.live_jobs)
  })

  it('has each job as its single-job body, byte for byte, in the list order', async () => {
    const { bytes } = await download('/api/v2/exports/jobs.ndjson.gz')
    const lines = gunzipSync(bytes).toString('utf8').split('\n')
    expect(lines.pop(), 'every line ends with a newline').toBe('')
    expect(lines.map((line) => (JSON.parse(line) as { slug: string }).slug)).toEqual(await listedSlugs())
    for (const line of lines) {
      const { slug } = JSON.parse(line) as { slug: string }
      expect(await (await get(`/api/v2/jobs/${slug}`)).text()).toBe(line)
    }
  })

  it('has each listed company as its profile body, byte for byte', async () => {
    const { bytes } = await download('/api/v2/exports/companies.ndjson.gz')
    const lines = gunzipSync(bytes).toString('utf8').trimEnd().split('\n')
    const listed = (await (await get('/api/v2/companies?limit=100')).json()) as { data: { slug: string }[] }
    expect(lines.map((line) => (JSON.parse(line) as { slug: string }).slug)).toEqual(
      listed.data.map((company) => company.slug),
    )
    for (const line of lines) {
      const { slug } = JSON.parse(line) as { slug: string }
      expect(await (await get(`/api/v2/companies/${slug}`)).text()).toBe(line)
    }
  })

  it('answers HEAD, single ranges, 416, If-None-Match and If-Range; multi-range gets the whole file', async () => {
    const [jobs] = (await exportsIndex()).files
    const { url, bytes: size, sha256: hash } = jobs!
    const { bytes: whole } = await download(url)

    const head = await get(url, {}, 'HEAD')
    expect(head.status).toBe(200)
    expect(head.headers.get('content-length')).toBe(String(size))
    expect((await head.arrayBuffer()).byteLength).toBe(0)

    const part = await download(url, { range: 'bytes=100-199' })
    expect(part.response.status).toBe(206)
    expect(part.response.headers.get('content-range')).toBe(`bytes 100-199/${size}`)
    expect(part.bytes.equals(whole.subarray(100, 200))).toBe(true)
    // A browser script resuming a download can read the range headers.
    expect(part.response.headers.get('access-control-expose-headers')).toMatch(/\bContent-Range\b/)

    const suffix = await download(url, { range: 'bytes=-50' })
    expect(suffix.response.status).toBe(206)
    expect(suffix.bytes.equals(whole.subarray(size - 50))).toBe(true)

    const past = await get(url, { range: `bytes=${size}-` })
    expect(past.status).toBe(416)
    expect(past.headers.get('content-range')).toBe(`bytes */${size}`)
    expect(past.headers.get('x-snapshot-id')).toBeTruthy()
    expect(((await past.json()) as { error: { code: number } }).error.code).toBe(416)

    const cached = await get(url, { 'if-none-match': `"${hash}"` })
    expect(cached.status).toBe(304)
    expect(cached.headers.get('etag')).toBe(`"${hash}"`)

    const sameFile = await get(url, { range: 'bytes=0-9', 'if-range': `"${hash}"` })
    expect(sameFile.status).toBe(206)
    const otherFile = await download(url, { range: 'bytes=0-9', 'if-range': '"0000"' })
    expect(otherFile.response.status).toBe(200)
    expect(otherFile.bytes.length).toBe(size)

    const multi = await download(url, { range: 'bytes=0-9,20-29' })
    expect(multi.response.status).toBe(200)
    expect(multi.bytes.length).toBe(size)

    const unknown = await get('/api/v2/exports/jobs.csv')
    expect(unknown.status).toBe(404)
  })
})

describe('jobs.parquet, queried in place over HTTP', () => {
  it('gives the API’s answer for two columns of one week’s jobs, reading under 10% of the file', async () => {
    const parquet = (await exportsIndex()).files.find((file) => file.name === 'jobs.parquet')!
    let bytesServed = 0
    let requests = 0
    const countingFetch: typeof fetch = async (input, init) => {
      const response = await fetch(input, init)
      requests++
      if (init?.method !== 'HEAD') bytesServed += Number(response.headers.get('content-length') ?? 0)
      return response
    }
    const file = await asyncBufferFromUrl({ url: `${server.url}${parquet.url}`, fetch: countingFetch })
    // The footer is read first: its last 8 bytes give its length. A careful client (DuckDB does) reads only
    // that much; hyparquet guesses 512 KB unless told, more than this small file holds.
    const metadata = await parquetMetadataAsync(file, { initialFetchSize: 8 })
    expect(metadata.row_groups.length).toBeGreaterThan(4)

    // The API's jobs, to pick a week in the middle of the posting dates and to know the answer.
    const jobs: { slug: string; posted_at: string }[] = []
    for (let page = 1; ; page++) {
      const body = (await (await get(`/api/v2/jobs?limit=100&page=${page}`)).json()) as {
        data: typeof jobs
        has_more: boolean
      }
      jobs.push(...body.data)
      if (!body.has_more) break
    }
    const from = Date.parse(jobs[Math.floor(jobs.length / 2)]!.posted_at)
    const to = from + 7 * 86_400_000
    const expected = jobs
      .filter((job) => Date.parse(job.posted_at) >= from && Date.parse(job.posted_at) < to)
      .map((job) => ({ slug: job.slug, posted_at: Date.parse(job.posted_at) }))
    expect(expected.length).toBeGreaterThan(5)

    const rows = (await parquetQuery({
      file,
      metadata,
      columns: ['slug', 'posted_at'],
      filter: { posted_at: { $gte: new Date(from), $lt: new Date(to) } },
    })) as { slug: string; posted_at: Date }[]
    expect(rows.map((row) => ({ slug: row.slug, posted_at: row.posted_at.getTime() }))).toEqual(expected)
    expect(requests).toBeGreaterThan(1)
    expect(bytesServed / parquet.bytes, `${bytesServed} of ${parquet.bytes} bytes read`).toBeLessThan(0.1)
  })
})

describe('loading a snapshot', () => {
  it('refuses one whose export is not the size its manifest records', async () => {
    const { snapshotDir } = await build()
    const copy = `${dataset.distDir}-copy`
    // A copy, not links: truncating a hard-linked file would change every snapshot that shares it.
    await cp(snapshotDir, copy, { recursive: true })
    await expect(loadSnapshot(copy, createFileCache(0)).then((loaded) => loaded.close())).resolves.toBeUndefined()
    await truncate(path.join(copy, 'exports/jobs.parquet'), 100)
    await expect(loadSnapshot(copy, createFileCache(0))).rejects.toThrow(
      /jobs\.parquet: 100 bytes, the manifest says \d+/,
    )
    await rm(path.join(copy, 'exports/companies.ndjson.gz'))
    await truncate(path.join(copy, 'exports/jobs.parquet'), 0)
    await expect(loadSnapshot(copy, createFileCache(0))).rejects.toThrow(/missing|manifest says/)
    await server.reload()
  })
})

describe('across snapshots', () => {
  it('resumes an interrupted download to the exact file, and sends the whole new file after a publish', async () => {
    const [jobs] = (await exportsIndex()).files
    const half = Math.floor(jobs!.bytes / 2)
    const first = await download(jobs!.url, { range: `bytes=0-${half - 1}` })
    const etag = first.response.headers.get('etag')!
    const rest = await download(jobs!.url, { range: `bytes=${half}-`, 'if-range': etag })
    expect(rest.response.status).toBe(206)
    expect(sha256(Buffer.concat([first.bytes, rest.bytes]))).toBe(jobs!.sha256)

    // A new snapshot between the two halves: the second request gets the new file, whole.
    await editJobs(dataset.dataDir, (records) => {
      records[0]!.title = `${records[0]!.title} (edited)`
    })
    await publish()
    const [next] = (await exportsIndex()).files
    expect(next!.sha256).not.toBe(jobs!.sha256)
    const after = await download(jobs!.url, { range: `bytes=${half}-`, 'if-range': etag })
    expect(after.response.status).toBe(200)
    expect(sha256(after.bytes)).toBe(next!.sha256)
  })

  it('mirrors the API job for job: the export, then the change feed, across builds', async () => {
    const mirror = new Map<string, string>()
    const { response, bytes } = await download('/api/v2/exports/jobs.ndjson.gz')
    for (const line of gunzipSync(bytes).toString('utf8').trimEnd().split('\n'))
      mirror.set((JSON.parse(line) as { slug: string }).slug, line)
    let since = response.headers.get('x-snapshot-id')!

    // The source changes twice: jobs retitled, closed and added.
    await editJobs(dataset.dataDir, (records) => {
      records[1]!.title = `${records[1]!.title} (mirror test)`
      records[2]!.status = 'closed'
      records.push({ ...records[3]!, id: '00000000-0000-4000-8000-0000000abc01', slug: 'mirror-test-new-job' })
    })
    const built = await publish()
    expect(built.exportMembersReused, 'unchanged runs of jobs are copied').toBeGreaterThan(0)
    expect(built.parquetChunksReused, 'unchanged column chunks of jobs.parquet are copied').toBeGreaterThan(0)
    await editJobs(dataset.dataDir, (records) => {
      records[4]!.status = 'closed'
    })
    await publish()

    const changes = (await (await get(`/api/v2/changes?since=${since}`)).json()) as {
      until: string
      added: string[]
      updated: string[]
      removed: string[]
    }
    for (const slug of changes.removed) mirror.delete(slug)
    for (const slug of [...changes.added, ...changes.updated])
      mirror.set(slug, await (await get(`/api/v2/jobs/${slug}`)).text())
    since = changes.until

    const api = new Map<string, string>()
    for (const slug of await listedSlugs()) api.set(slug, await (await get(`/api/v2/jobs/${slug}`)).text())
    expect(mirror.size).toBe(api.size)
    expect(new Map([...mirror].sort())).toEqual(new Map([...api].sort()))

    // The export rebuilt from copied members is the API too, line for line, in order.
    const rebuilt = gunzipSync((await download('/api/v2/exports/jobs.ndjson.gz')).bytes).toString('utf8')
    expect(rebuilt).toBe(`${[...api.values()].join('\n')}\n`)
  })

  it('rebuilds jobs.ndjson.gz from copied members to the same bytes as a build from scratch', async () => {
    const [current] = (await exportsIndex()).files
    const fresh = await buildSnapshot({
      dataDir: dataset.dataDir,
      distDir: `${dataset.distDir}-fresh`,
      siteUrl: 'https://jobsnap.example',
      now: new Date(clock),
      progress: createProgress(process.stderr, true),
    })
    expect(fresh.exportMembersReused).toBe(0)
    const record = fresh.manifest.exports.find((file) => file.name === 'jobs.ndjson.gz')!
    expect(record.sha256).toBe(current!.sha256)
  })

  it('rebuilds jobs.parquet from copied column chunks to the same bytes as a build from scratch', async () => {
    const current = (await exportsIndex()).files.find((file) => file.name === 'jobs.parquet')!
    const fresh = await buildSnapshot({
      dataDir: dataset.dataDir,
      distDir: `${dataset.distDir}-fresh-parquet`,
      siteUrl: 'https://jobsnap.example',
      now: new Date(clock),
      parquetRowGroupRows: 200,
      progress: createProgress(process.stderr, true),
    })
    expect(fresh.parquetChunksReused).toBe(0)
    expect(fresh.manifest.exports.find((file) => file.name === 'jobs.parquet')!.sha256).toBe(current.sha256)
  })

  it('rebuilds jobs.parquet to the same bytes after edits in place to text, number and list columns', async () => {
    // No job added or removed: every row group keeps its rows, so only the edited jobs are parsed.
    await editJobs(dataset.dataDir, (records) => {
      for (const [index, record] of records.entries()) {
        if (index % 29 === 0) record.title = `${record.title} (in place)`
        if (index % 31 === 0) record.description = `${String(record.description)} Edited in place.`
        if (index % 37 === 0 && typeof record.salary_max === 'number') record.salary_max += 1
        if (index % 41 === 0) record.timezones = ['Pacific/Auckland']
      }
    })
    const built = await build()
    expect(built.parquetChunksReused, 'the unedited columns are copied').toBeGreaterThan(0)
    const fresh = await buildSnapshot({
      dataDir: dataset.dataDir,
      distDir: `${dataset.distDir}-fresh-in-place`,
      siteUrl: 'https://jobsnap.example',
      now: new Date(clock),
      parquetRowGroupRows: 200,
      progress: createProgress(process.stderr, true),
    })
    const sha = (result: BuildResult) => result.manifest.exports.find((file) => file.name === 'jobs.parquet')!.sha256
    expect(sha(built)).toBe(sha(fresh))
  })
})
