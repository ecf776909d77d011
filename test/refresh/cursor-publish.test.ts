/**
 * Cursor paging across a publish (docs/api.md: Paging): a crawl of
 * /api/v2/jobs or /api/v2/companies that is half done when a new snapshot
 * is published (jobs closed and added on both sides of where the crawl
 * stands, employers gone) sees every item live in both snapshots exactly
 * once, where the same crawl by page number loses some.
 */
import { afterAll, beforeAll, expect, it } from 'vitest'
import type { RunningServer } from '../../runtime/index.ts'
import { startFixtureServer, testUuid } from '../support/fixtures.ts'
import { build, createDataset, editJobs, type RefreshDataset } from './support/dataset.ts'

let dataset: RefreshDataset
let server: RunningServer
let clock = Date.parse('2026-11-20T00:00:00Z')
const nextNow = () => {
  clock += 60_000
  return new Date(clock)
}
let added = 0

beforeAll(async () => {
  dataset = await createDataset({ prefix: 'cursor-publish', jobs: 300, companies: 30 })
  await build(dataset, { now: nextNow() })
  server = await startFixtureServer(dataset.distDir, { JOBSNAP_REST_LIMIT: 100_000 }, () => Date.now())
}, 120_000)

afterAll(async () => {
  await server?.close()
  await dataset?.cleanup()
})

interface Page {
  slugs: string[]
  next: string | null
  snapshot: string | null
}

async function page(list: 'jobs' | 'companies', query: string): Promise<Page> {
  const response = await fetch(`${server.url}/api/v2/${list}?${query}`)
  const text = await response.text()
  expect(response.status, text.slice(0, 300)).toBe(200)
  const body = JSON.parse(text) as { data: { slug: string }[]; next_cursor: string | null }
  return {
    slugs: body.data.map((item) => item.slug),
    next: body.next_cursor,
    snapshot: response.headers.get('x-snapshot-id'),
  }
}

/** Every slug of the list now, by page number. */
async function everything(list: 'jobs' | 'companies', query: string): Promise<string[]> {
  const slugs: string[] = []
  for (let n = 1; n < 1000; n++) {
    const { slugs: more, next } = await page(list, `${query}&page=${n}`)
    slugs.push(...more)
    if (next === null) return slugs
  }
  throw new Error('runaway paging')
}

/** Publishes a new snapshot made by `edit`, and waits until the server answers from it. */
async function publish(edit: Parameters<typeof editJobs>[1]): Promise<void> {
  await editJobs(dataset.dataDir, edit)
  const result = await build(dataset, { now: nextNow() })
  await server.reload()
  const health = (await (await fetch(`${server.url}/health`)).json()) as { snapshot_id: string }
  expect(health.snapshot_id).toBe(result.snapshotId)
}

/**
 * Crawls `query` by cursor and by page number side by side; after `pagesBefore` pages, publishes a
 * snapshot that `change` makes from the slugs seen so far and those still to come. Returns both crawls
 * and what the list held before and after.
 */
async function crawlAcrossPublish(
  list: 'jobs' | 'companies',
  query: string,
  pagesBefore: number,
  change: (seen: Set<string>, toCome: string[]) => Parameters<typeof editJobs>[1],
) {
  const before = await everything(list, query)
  const byCursor: string[] = []
  const byPage: string[] = []
  const snapshots = new Set<string | null>()
  let cursor: string | null = null
  for (let n = 1; n <= pagesBefore; n++) {
    const next: Page = await page(list, cursor ? `${query}&cursor=${cursor}` : query)
    byCursor.push(...next.slugs)
    byPage.push(...(await page(list, `${query}&page=${n}`)).slugs)
    snapshots.add(next.snapshot)
    cursor = next.next
  }
  expect(cursor, 'the crawl is half done when the snapshot changes').not.toBeNull()
  const seen = new Set(byCursor)
  await publish(
    change(
      seen,
      before.filter((slug) => !seen.has(slug)),
    ),
  )
  const after = await everything(list, query)
  for (let n = pagesBefore + 1; cursor !== null; n++) {
    if (n > 1000) throw new Error('runaway crawl')
    const next: Page = await page(list, `${query}&cursor=${cursor}`)
    byCursor.push(...next.slugs)
    byPage.push(...(await page(list, `${query}&page=${n}`)).slugs)
    snapshots.add(next.snapshot)
    cursor = next.next
  }
  expect(snapshots.size, 'the crawl spans two snapshots').toBe(2)
  const inAfter = new Set(after)
  const throughout = before.filter((slug) => inAfter.has(slug))
  return { byCursor, byPage, before, after, throughout }
}

/** Closes jobs (by slug) and adds copies of others under new ids and slugs, keeping their sort keys. */
function closeAndCopy(close: string[], copy: string[]) {
  return (jobs: Parameters<Parameters<typeof editJobs>[1]>[0]) => {
    for (const job of jobs) if (close.includes(job.slug)) job.status = 'closed'
    for (const slug of copy) {
      const original = jobs.find((job) => job.slug === slug)!
      added++
      jobs.push({ ...original, id: testUuid(50_000 + added), slug: `copy-${added}-${slug}`.slice(0, 80) })
    }
  }
}

it.each(['sort=date&limit=10', 'sort=salary&limit=10', 'sort=salary&work_arrangement=remote,hybrid&limit=5'])(
  'jobs?%s: every job live in both snapshots is seen exactly once by cursor',
  async (query) => {
    const { byCursor, byPage, after, throughout } = await crawlAcrossPublish('jobs', query, 3, (seen, toCome) => {
      const done = [...seen]
      // Closed: three already seen, three still to come; copied (ties with the originals): on both sides too.
      return closeAndCopy([done[2]!, done[7]!, done[11]!, toCome[0]!, toCome[9]!, toCome[20]!], [done[4]!, toCome[5]!])
    })
    expect(new Set(byCursor).size, 'no job twice').toBe(byCursor.length)
    expect(
      throughout.filter((slug) => !byCursor.includes(slug)),
      'no job live throughout missed',
    ).toEqual([])
    expect(after.filter((slug) => slug.startsWith('copy-')).length).toBeGreaterThan(0)
    // What a crawl by page number does meanwhile: it loses jobs (the point of cursors).
    expect(throughout.filter((slug) => !byPage.includes(slug)).length).toBeGreaterThan(0)
  },
  60_000,
)

it('companies?sort=name: every employer listed in both snapshots is seen exactly once by cursor', async () => {
  const listed = (await (await fetch(`${server.url}/api/v2/companies?limit=100`)).json()) as {
    data: { id: string; slug: string }[]
  }
  const idOf = new Map(listed.data.map((company) => [company.slug, company.id]))
  const { byCursor, byPage, before, after, throughout } = await crawlAcrossPublish(
    'companies',
    'sort=name&limit=4',
    2,
    (seen, toCome) => (jobs) => {
      // Employers gone (every job closed): two already listed, one still to come.
      const gone = new Set([...[...seen].slice(1, 3), toCome[2]!].map((slug) => idOf.get(slug)))
      for (const job of jobs) if (gone.has(String(job.company_id))) job.status = 'closed'
    },
  )
  expect(after.length).toBe(before.length - 3)
  expect(new Set(byCursor).size).toBe(byCursor.length)
  expect(throughout.filter((slug) => !byCursor.includes(slug))).toEqual([])
  expect(throughout.filter((slug) => !byPage.includes(slug)).length).toBeGreaterThan(0)
}, 60_000)
