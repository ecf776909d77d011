/**
 * The change feed, GET /api/v2/changes?since= (docs/api.md: Changes), over a
 * real sequence of builds: jobs added, retitled, closed, an employer renamed
 * (which rewrites every job of theirs), old snapshots pruned, and a rollback.
 * The oracle compares the two snapshots' own job files on disk: a slug whose
 * file appeared, differs or went.
 */
import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parse as parseYaml } from 'yaml'
import { type BuildResult, rollbackSnapshot } from '../../build/index.ts'
import { jobFilesThroughLayers, V2ChangesResponse } from '../../core/index.ts'
import type { RunningServer } from '../../runtime/index.ts'
import { startFixtureServer, testUuid } from '../support/fixtures.ts'
import { build, createDataset, editCompanies, editJobs, type RefreshDataset, snapshotDir } from './support/dataset.ts'

interface ChangesBody {
  since: string
  until: string
  added: string[]
  updated: string[]
  removed: string[]
}

let dataset: RefreshDataset
let server: RunningServer
const builds: BuildResult[] = []
let clock = Date.parse('2026-11-20T00:00:00Z')
const nextNow = () => {
  clock += 60_000
  return new Date(clock)
}
/** Snapshots kept by these builds: the first ones are pruned by the last. */
const KEEP = 4

/** Each build's job files, read as soon as it was published (the first is pruned later). */
const filesOf = new Map<string, Map<string, string>>()

/** Slug -> bytes of every job file of a snapshot. */
async function jobFiles(id: string): Promise<Map<string, string>> {
  const known = filesOf.get(id)
  if (known) return known
  const out = new Map<string, string>()
  for (const [slug, file] of jobFilesThroughLayers(snapshotDir(dataset.distDir, id)))
    out.set(slug, await readFile(file, 'utf8'))
  return out
}

/** What changed between two snapshots, read off their files. */
function diff(before: Map<string, string>, after: Map<string, string>): Omit<ChangesBody, 'since' | 'until'> {
  const sorted = (values: string[]) => values.sort()
  return {
    added: sorted([...after.keys()].filter((slug) => !before.has(slug))),
    updated: sorted([...after.keys()].filter((slug) => before.has(slug) && before.get(slug) !== after.get(slug))),
    removed: sorted([...before.keys()].filter((slug) => !after.has(slug))),
  }
}

async function changes(
  since: string | undefined,
  extra = '',
): Promise<{ status: number; body: unknown; headers: Headers }> {
  const query = since === undefined ? extra : `since=${encodeURIComponent(since)}${extra}`
  const response = await fetch(`${server.url}/api/v2/changes?${query}`)
  return { status: response.status, body: await response.json(), headers: response.headers }
}

async function currentId(): Promise<string> {
  return ((await (await fetch(`${server.url}/health`)).json()) as { snapshot_id: string }).snapshot_id
}

beforeAll(async () => {
  dataset = await createDataset({ prefix: 'changes', jobs: 200, companies: 30 })
  // Full sets of job files: pruning then goes by KEEP alone (it keeps a base a kept delta looks through too).
  const keep = { keepSnapshots: KEEP, jobDeltaMaxPercent: 0 }
  const record = async () => {
    const result = await build(dataset, { now: nextNow(), ...keep })
    builds.push(result)
    filesOf.set(result.snapshotId, await jobFiles(result.snapshotId))
  }
  await record()
  // 1: two jobs retitled, one closed.
  await editJobs(dataset.dataDir, (jobs) => {
    jobs[3]!.title += ' (edited)'
    jobs[40]!.title += ' (edited)'
    jobs[41]!.status = 'closed'
  })
  await record()
  // 2: a new job, and the retitled one edited back.
  await editJobs(dataset.dataDir, (jobs) => {
    jobs.push({ ...jobs[10]!, id: testUuid(901), slug: 'a-brand-new-job', title: 'A brand new job' })
    jobs[3]!.title = jobs[3]!.title.replace(' (edited)', '')
  })
  await record()
  // 3: an employer renamed: every job of theirs embeds the new name.
  await editCompanies(dataset.dataDir, (companies) => {
    companies[0]!.name = `${companies[0]!.name} Renamed`
  })
  await record()
  // 4: the closed job reopened, the new one closed.
  await editJobs(dataset.dataDir, (jobs) => {
    jobs[41]!.status = 'live'
    jobs.find((job) => job.slug === 'a-brand-new-job')!.status = 'closed'
  })
  await record()
  server = await startFixtureServer(dataset.distDir, { JOBSNAP_REST_LIMIT: 100_000 }, () => Date.now())
}, 120_000)

afterAll(async () => {
  await server?.close()
  await dataset?.cleanup()
})

describe('GET /api/v2/changes', () => {
  it('from each earlier snapshot to the live one: exactly the jobs whose files differ, composed over every build between', async () => {
    const last = builds.at(-1)!
    const now = await jobFiles(last.snapshotId)
    const pruned = await readdir(snapshotDir(dataset.distDir, builds[0]!.snapshotId)).catch(() => 'pruned')
    expect(pruned, 'the first snapshot was pruned; the next one still links to it').toBe('pruned')
    let nonEmpty = 0
    for (const earlier of builds) {
      const { status, body, headers } = await changes(earlier.snapshotId)
      expect(status, earlier.snapshotId).toBe(200)
      const expected = diff(await jobFiles(earlier.snapshotId), now)
      V2ChangesResponse.parse(body)
      expect(body).toEqual({ since: earlier.snapshotId, until: last.snapshotId, ...expected })
      expect(headers.get('x-snapshot-id')).toBe(last.snapshotId)
      if (expected.added.length + expected.updated.length + expected.removed.length > 0) nonEmpty++
    }
    expect(nonEmpty, 'the builds really changed jobs').toBeGreaterThanOrEqual(builds.length - 1)
  })

  it('sees the employer rename as an update of every job of theirs', async () => {
    const [before, after] = builds.slice(2, 4)
    const renamed = diff(await jobFiles(before!.snapshotId), await jobFiles(after!.snapshotId))
    expect(renamed.updated.length).toBeGreaterThan(1)
    const link = JSON.parse(await readFile(path.join(after!.snapshotDir, 'index/changes.json'), 'utf8'))
    expect(link).toMatchObject({ previous: before!.snapshotId, ...renamed })
  })

  it('answers since=the live snapshot with nothing, cached with an ETag like every v2 answer', async () => {
    const live = builds.at(-1)!.snapshotId
    const first = await changes(live)
    expect(first.body).toEqual({ since: live, until: live, added: [], updated: [], removed: [] })
    const again = await fetch(`${server.url}/api/v2/changes?since=${live}`, {
      headers: { 'if-none-match': first.headers.get('etag')! },
    })
    expect(again.status).toBe(304)
    expect(first.headers.get('cache-control')).toBe('public, max-age=60')
    expect(first.headers.get('x-ratelimit-limit')).toBeTruthy()
  })

  it("the document's examples work: its 404 and 410 answer so, and since has no example that a publish would change", async () => {
    type Example = { summary: string; value: { error: { code: number } } }
    type Response = { content: { 'application/json': { examples: Record<string, Example> } } }
    const doc = parseYaml(await (await fetch(`${server.url}/openapi.yaml`)).text()) as {
      paths: Record<
        string,
        { get: { parameters: { name: string; example?: string }[]; responses: Record<string, Response> } }
      >
    }
    const operation = doc.paths['/api/v2/changes']!.get
    // An example id would make the document differ with every publish, and could only ever answer 410 soon.
    expect(operation.parameters.find((p) => p.name === 'since')!.example).toBeUndefined()
    for (const code of ['404', '410']) {
      const examples = Object.values(operation.responses[code]!.content['application/json'].examples)
      expect(examples.length).toBe(1)
      const { summary, value } = examples[0]!
      expect(value.error.code).toBe(Number(code))
      const asked = await fetch(`${server.url}${summary.replace(/^GET /, '')}`)
      expect(asked.status, summary).toBe(Number(code))
    }
  })

  it('410 before the oldest snapshot still linked, naming it; 404 for an id never built; 400 for junk', async () => {
    const ancient = await changes('20200101T000000000Z-0123abcd')
    expect(ancient.status).toBe(410)
    const oldest = builds[0]!.snapshotId
    expect(ancient.headers.get('x-oldest-snapshot-id')).toBe(oldest)
    const error = (ancient.body as { error: { message: string; field: string } }).error
    expect(error.field).toBe('since')
    expect(error.message).toContain(oldest)
    expect(ancient.headers.get('cache-control')).toBe('no-store')

    const future = await changes('29991231T235959999Z-0123abcd')
    expect(future.status).toBe(404)
    for (const junk of ['yesterday', '', '20261124T182512983Z']) {
      const bad = await changes(junk)
      expect(bad.status, junk).toBe(400)
      expect((bad.body as { error: { field: string } }).error.field).toBe('since')
    }
    expect((await changes(undefined)).status).toBe(400)
    const twice = await changes(builds[1]!.snapshotId, `&since=${builds[2]!.snapshotId}`)
    expect(twice.status).toBe(400)
    const ignored = await changes(builds.at(-1)!.snapshotId, '&limit=5')
    expect(ignored.headers.get('x-ignored-parameters')).toBe('limit')
  })

  it('after a rollback, follows the tree: from the abandoned snapshot back to the republished one', async () => {
    const abandoned = builds.at(-1)!.snapshotId
    const { to } = await rollbackSnapshot(dataset.distDir)
    expect(to).toBe(builds.at(-2)!.snapshotId)
    const deadline = Date.now() + 10_000
    while ((await currentId()) !== to && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
    expect(await currentId()).toBe(to)
    const { status, body } = await changes(abandoned)
    expect(status).toBe(200)
    expect(body).toEqual({
      since: abandoned,
      until: to,
      ...diff(await jobFiles(abandoned), await jobFiles(to)),
    })
    expect((body as ChangesBody).added).toContain('a-brand-new-job')
    // The republished older build is newer to clients than the abandoned one: Last-Modified does not go back,
    // so a reader holding the abandoned snapshot's answer with If-Modified-Since gets the new one, not a 304.
    const abandonedBuilt = Date.parse(
      JSON.parse(await readFile(path.join(snapshotDir(dataset.distDir, abandoned), 'manifest.json'), 'utf8')).built_at,
    )
    for (const route of ['/api/v2/jobs?limit=1', '/feeds/jobs.rss']) {
      const res = await fetch(`${server.url}${route}`, {
        headers: { 'if-modified-since': new Date(abandonedBuilt).toUTCString() },
      })
      expect(res.status, route).toBe(200)
      expect(Date.parse(res.headers.get('last-modified')!), route).toBeGreaterThan(abandonedBuilt)
    }
  })

  it('410, not 404, for a snapshot that was published and then pruned, though newer than one still kept', async () => {
    // After the rollback the abandoned snapshot is the newest id but not the latest publish: the next
    // builds prune it while the older, republished one stays.
    const abandoned = builds.at(-1)!.snapshotId
    const republished = builds.at(-2)!.snapshotId
    for (let i = 0; i < 6 && (await exists(abandoned)); i++) {
      const result = await build(dataset, { now: nextNow(), keepSnapshots: KEEP, jobDeltaMaxPercent: 0 })
      const deadline = Date.now() + 10_000
      while ((await currentId()) !== result.snapshotId && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 50))
    }
    expect(await exists(abandoned), 'pruned').toBe(false)
    expect(await exists(republished), 'the older, republished snapshot is still kept').toBe(true)
    const gone = await changes(abandoned)
    expect(gone.status).toBe(410)
    expect(gone.headers.get('x-oldest-snapshot-id')).toBeTruthy()
    expect((await changes(republished)).status).toBe(200)
  })

  it('lists a job that expired since its snapshot was built as removed, never as added or updated', async () => {
    const since = builds[1]!.snapshotId
    const before = await jobFiles(since)
    const live = await jobFiles(await currentId())
    const slug = [...live.keys()].find((candidate) => before.has(candidate))!
    // The job gets an expiry after this build's time and after today (the first server runs on the real clock,
    // and must still see it live), then the second server's clock passes it.
    const expiresAt = new Date(Date.now() + 30 * 86_400_000).toISOString()
    await editJobs(dataset.dataDir, (jobs) => {
      jobs.find((job) => job.slug === slug)!.expires_at = expiresAt
    })
    const result = await build(dataset, { now: nextNow(), keepSnapshots: KEEP, jobDeltaMaxPercent: 0 })
    expect(result.snapshotId).not.toBe(since)
    const later = await startFixtureServer(
      dataset.distDir,
      { JOBSNAP_REST_LIMIT: 100_000 },
      () => Date.parse(expiresAt) + 1,
    )
    try {
      const response = await fetch(`${later.url}/api/v2/changes?since=${since}`)
      expect(response.status).toBe(200)
      const body = (await response.json()) as ChangesBody
      expect(body.until).toBe(result.snapshotId)
      expect(body.removed).toContain(slug)
      expect(body.updated).not.toContain(slug)
      expect(body.added).not.toContain(slug)
      expect((await fetch(`${later.url}/api/v2/jobs/${slug}`)).status).toBe(404)
      // Every slug listed as added or updated is one GET /api/v2/jobs/{slug} serves.
      for (const listed of [...body.added, ...body.updated])
        expect((await fetch(`${later.url}/api/v2/jobs/${listed}`)).status, listed).toBe(200)
      // Before the expiry the same question lists it as updated (it gained an expires_at).
      const deadline = Date.now() + 10_000
      while ((await currentId()) !== result.snapshotId && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 50))
      const earlier = (await (await fetch(`${server.url}/api/v2/changes?since=${since}`)).json()) as ChangesBody
      expect(earlier.until).toBe(result.snapshotId)
      expect(earlier.updated).toContain(slug)
    } finally {
      await later.close()
    }
  })
})

async function exists(id: string): Promise<boolean> {
  return readdir(snapshotDir(dataset.distDir, id)).then(
    () => true,
    () => false,
  )
}
