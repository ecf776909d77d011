/**
 * Cursor paging of /api/v2/jobs and /api/v2/companies on a real server
 * (docs/api.md: Paging): a crawl by cursor lists what page numbers list;
 * a job expiring mid-crawl makes a crawl by page number lose a job but not
 * one by cursor; cursors that are not the API's, or belong to another sort,
 * other filters or the other list, are 400s naming `cursor`; cursor and
 * page together are refused; the response cache keys on the cursor; feeds
 * name `cursor` back as ignored and v1 does not look at it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CURSOR_MAX_LENGTH, encodeCursor, V2CompanyListResponse, V2ListResponse } from '../../core/index.ts'
import type { RunningServer } from '../../runtime/index.ts'
import { FIXTURE_NOW, startFixtureServer } from '../support/fixtures.ts'
import { buildRestFixture, type RestFixture } from './support/fixture.ts'
import { expectErrorResponse, type JsonResponse, request } from './support/http.ts'

let fixture: RestFixture
let server: RunningServer
let now = FIXTURE_NOW.getTime()

beforeAll(async () => {
  fixture = await buildRestFixture({ jobs: 400, companies: 60, seed: 11 })
  server = await startFixtureServer(fixture.distDir, { JOBSNAP_REST_LIMIT: 100_000 }, () => now)
})

afterAll(async () => {
  await server?.close()
  await fixture?.cleanup()
})

type List = 'jobs' | 'companies'
type ListBody = {
  data: { slug: string }[]
  page: number | null
  total: number
  has_more: boolean
  next_cursor: string | null
}

async function getList(list: List, query: string): Promise<JsonResponse<ListBody>> {
  const res = await request<ListBody>(`${server.url}/api/v2/${list}?${query}`)
  expect(res.status, `${list}?${query}: ${res.text.slice(0, 300)}`).toBe(200)
  // The documented shape, cursor fields included.
  ;(list === 'jobs' ? V2ListResponse : V2CompanyListResponse).parse(res.body)
  expect(res.headers.get('x-ignored-parameters')).toBeNull()
  return res
}

/**
 * Crawls `query` by cursor, or by page number, calling `between(pageIndex, slugs)` after each
 * page (where a test changes the clock), and returns the slugs in order.
 */
async function crawl(
  list: List,
  query: string,
  by: 'cursor' | 'page',
  between: (pages: number, slugs: string[]) => void = () => {},
): Promise<string[]> {
  const slugs: string[] = []
  let cursor: string | null = null
  for (let pages = 0; pages < 1000; pages++) {
    const paging = by === 'page' ? `&page=${pages + 1}` : cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''
    const { body } = await getList(list, `${query}${paging}`)
    slugs.push(...body.data.map((item) => item.slug))
    expect(body.has_more).toBe(body.next_cursor !== null)
    if (by === 'cursor') expect(body.page).toBe(pages === 0 ? 1 : null)
    between(pages, slugs)
    if (!body.has_more) {
      expect(body.next_cursor).toBeNull()
      return slugs
    }
    cursor = body.next_cursor
  }
  throw new Error('runaway crawl')
}

describe('a crawl by cursor', () => {
  it.each([
    ['jobs', 'limit=9'],
    ['jobs', 'sort=salary&limit=9'],
    ['jobs', 'sort=salary&work_arrangement=remote&limit=4'],
    ['jobs', 'sort=date&work_arrangement=remote,hybrid&posted_after=365&limit=3'],
    ['companies', 'limit=7'],
    ['companies', 'sort=jobs&limit=7'],
  ] as const)('%s?%s lists what page numbers list, in the same order', async (list, query) => {
    const byPage = await crawl(list, query, 'page')
    expect(byPage.length).toBeGreaterThan(10)
    expect(await crawl(list, query, 'cursor')).toEqual(byPage)
  })

  it('says what page, total and has_more mean on a page asked for by cursor', async () => {
    const first = (await getList('jobs', 'limit=5')).body
    const second = (await getList('jobs', `limit=5&cursor=${first.next_cursor}`)).body
    expect(second).toMatchObject({ page: null, total: first.total, has_more: true })
    expect(second.data.map((job) => job.slug)).toEqual(
      (await getList('jobs', 'limit=5&page=2')).body.data.map((job) => job.slug),
    )
    // An empty cursor is no cursor: the first page.
    expect((await getList('jobs', 'limit=5&cursor=')).body).toEqual(first)
    // limit may change between pages.
    const wider = (await getList('jobs', `limit=10&cursor=${first.next_cursor}`)).body
    expect(wider.data.map((job) => job.slug)).toEqual(
      (await getList('jobs', 'limit=15')).body.data.slice(5).map((job) => job.slug),
    )
  })

  it('counts facets over every match, whatever the cursor', async () => {
    const first = (await getList('jobs', 'limit=5&facets=category,level')).body as ListBody & { facets: unknown }
    const later = (await getList('jobs', `limit=5&facets=category,level&cursor=${first.next_cursor}`))
      .body as ListBody & {
      facets: unknown
    }
    expect(later.facets).toEqual(first.facets)
  })

  it('is cached per cursor', async () => {
    const first = (await getList('jobs', 'limit=6&sort=salary')).body
    const path = `limit=6&sort=salary&cursor=${first.next_cursor}`
    const miss = await getList('jobs', path)
    const hit = await getList('jobs', path)
    expect(miss.headers.get('x-cache')).toBe('MISS')
    expect(hit.headers.get('x-cache')).toBe('HIT')
    expect(hit.text).toBe(miss.text)
    const next = await getList('jobs', `limit=6&sort=salary&cursor=${miss.body.next_cursor}`)
    expect(next.headers.get('x-cache')).toBe('MISS')
    expect(next.body.data[0]!.slug).not.toBe(miss.body.data[0]!.slug)
  })
})

describe('a job expiring mid-crawl', () => {
  it.each(['limit=10', 'sort=salary&limit=10'])(
    '%s: is lost by a crawl by page number, while a crawl by cursor sees every job live throughout exactly once',
    async (query) => {
      const start = now
      // The next job to expire, and where it stands in this order.
      const expiring = fixture.oracle
        .live(start)
        .filter((job) => job.expiresMs !== undefined)
        .sort((a, b) => a.expiresMs! - b.expiresMs!)[0]!
      const order = await crawl('jobs', query, 'page')
      expect(order.indexOf(expiring.raw.slug)).toBeLessThan(order.length - 20)
      const expire = (_: number, slugs: string[]) => {
        // Once the crawl has passed the job, it expires.
        if (slugs.includes(expiring.raw.slug)) now = expiring.expiresMs! + 1
      }
      try {
        const byPage = await crawl('jobs', query, 'page', expire)
        now = start
        const byCursor = await crawl('jobs', query, 'cursor', expire)
        const liveThroughout = fixture.oracle.live(expiring.expiresMs! + 1).map((job) => job.raw.slug)
        // Page numbers: every later page shifted by one, so one job was never fetched.
        expect(liveThroughout.filter((slug) => !byPage.includes(slug)).length).toBe(1)
        expect(new Set(byCursor).size).toBe(byCursor.length)
        expect(liveThroughout.filter((slug) => !byCursor.includes(slug))).toEqual([])
      } finally {
        now = start
      }
    },
  )
})

describe('cursors the API did not make, or made for something else', () => {
  async function expectCursorError(list: List, query: string): Promise<string> {
    const res = await request(`${server.url}/api/v2/${list}?${query}`)
    return expectErrorResponse(res, 400, 'cursor').message
  }

  it('refuses garbage, wrong base64, tampered and huge cursors with a 400 naming cursor', async () => {
    const real = (await getList('jobs', 'limit=3')).body.next_cursor!
    const [payload, check] = real.split('.') as [string, string]
    const flipped = (s: string, i: number) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1)
    const bad = [
      'garbage',
      '%00%01',
      'a!b*.12345678',
      `${payload}`,
      `${payload}.${check}.${check}`,
      `${flipped(payload, 10)}.${check}`,
      `${payload}.${flipped(check, 0)}`,
      `${payload.slice(0, -4)}.${check}`,
      // A well-formed envelope around fields of the wrong kinds.
      encodeCursor({ sort: 'date', filters: 'x', postedAt: 0, id: 'x' }),
      encodeCursor({ sort: 'date', filters: real.slice(0, 8), postedAt: 'soon' as unknown as number, id: 'x' }),
      encodeCursor({ sort: 'salary', filters: real.slice(0, 8), salary: -1, postedAt: 0, id: 'x' }),
      'A'.repeat(CURSOR_MAX_LENGTH + 1),
      'A'.repeat(10_000),
    ]
    for (const cursor of bad) {
      const message = await expectCursorError('jobs', `cursor=${encodeURIComponent(cursor)}`)
      expect(message, cursor.slice(0, 50)).toMatch(/cursor/)
      await expectCursorError('companies', `cursor=${encodeURIComponent(cursor)}`)
    }
  })

  it('refuses a cursor made for another sort, other filters or the other list', async () => {
    const jobs = (await getList('jobs', 'limit=3&level=senior')).body.next_cursor!
    expect(await expectCursorError('jobs', `level=senior&sort=salary&cursor=${jobs}`)).toMatch(/sort=date/)
    expect(await expectCursorError('jobs', `level=lead&cursor=${jobs}`)).toMatch(/other filters/)
    expect(await expectCursorError('jobs', `cursor=${jobs}`)).toMatch(/other filters/)
    await expectCursorError('companies', `cursor=${jobs}`)
    // What does not select or order may change: limit, facets, and the same filters spelt otherwise.
    await getList('jobs', `level=SENIOR&limit=50&facets=category&cursor=${jobs}`)
    const companies = (await getList('companies', 'limit=3&sort=jobs')).body.next_cursor!
    expect(await expectCursorError('companies', `cursor=${companies}`)).toMatch(/sort=jobs/)
    await expectCursorError('jobs', `cursor=${companies}`)
  })

  it('refuses cursor with page, and two different cursors', async () => {
    for (const list of ['jobs', 'companies'] as const) {
      const cursor = (await getList(list, 'limit=3')).body.next_cursor!
      for (const page of ['1', '2', '-3'])
        expect(await expectCursorError(list, `cursor=${cursor}&page=${page}`)).toMatch(/page/)
      const other = (await getList(list, `limit=3&cursor=${cursor}`)).body.next_cursor!
      await expectCursorError(list, `cursor=${cursor}&cursor=${other}`)
      await getList(list, `cursor=${cursor}&cursor=${cursor}`)
    }
  })
})

describe('where cursor does not apply', () => {
  it('feeds name it back as ignored', async () => {
    const res = await request(`${server.url}/feeds/jobs.json?cursor=anything&level=senior`)
    expect(res.status).toBe(200)
    expect(res.headers.get('x-ignored-parameters')).toBe('cursor')
  })

  it('v1 does not look at it', async () => {
    const plain = await request(`${server.url}/api/v1?page=2`)
    const withCursor = await request(`${server.url}/api/v1?page=2&cursor=garbage`)
    expect(withCursor.status).toBe(200)
    expect(withCursor.text).toBe(plain.text)
  })
})
