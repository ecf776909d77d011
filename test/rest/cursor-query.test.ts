/**
 * Cursor paging in the query engine, without a server (docs/api.md:
 * Paging): over indexes full of ties (one posting time for many jobs, one
 * salary for many), a crawl by cursor returns the same jobs in the same
 * order as a crawl by page number, under every sort and kind of filter; and
 * a crawl that moves to another index mid-way (jobs removed and added on
 * both sides of the cursor) sees every job of both exactly once.
 */
import { describe, expect, it } from 'vitest'
import {
  encodeCursor,
  type IndexedJob,
  parseV2CompanyQuery,
  parseV2ListQuery,
  SnapshotCompanies,
  companyFiltersTag,
  v2FiltersTag,
} from '../../core/index.ts'
import {
  CompanyTable,
  companyCursorAt,
  JobIndex,
  jobCursorAt,
  runCompanyQuery,
  runV2Query,
  TextIndex,
} from '../../runtime/index.ts'
import { testUuid } from '../support/fixtures.ts'

const NOW = Date.parse('2026-11-22T12:00:00Z')
const DAY = 86_400_000

/** A seeded generator (mulberry32), so a failure can be replayed. */
function random(seed: number): () => number {
  let a = seed
  return () => {
    a = (a + 0x6d2b79f5) | 0
    let t = Math.imul(a ^ (a >>> 15), 1 | a)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** Jobs with few distinct posting times and salaries, so most keys tie and the tie-breaks decide. */
function makeJobs(count: number, seed: number, idPrefix: string): IndexedJob[] {
  const next = random(seed)
  return Array.from({ length: count }, (_, i) => {
    const salary = next() < 0.3 ? undefined : 50_000 + Math.floor(next() * 4) * 25_000
    return {
      id: `${idPrefix}${Math.floor(next() * 1e9)
        .toString(16)
        .padStart(8, '0')}-${i}`,
      slug: `job-${idPrefix}${i}`,
      company_id: `company-${i % 5}`,
      posted_at: NOW - Math.floor(next() * 6) * DAY,
      expires_at: next() < 0.2 ? NOW + Math.floor(next() * 10) * 60_000 : undefined,
      work_arrangement: next() < 0.5 ? 'remote' : 'onsite',
      tags: next() < 0.4 ? ['go'] : ['python'],
      places: [],
      salary_low: salary,
      salary_high: salary === undefined ? undefined : salary + (next() < 0.5 ? 0 : 10_000),
      hash: 'h',
    }
  })
}

/** The index the build would write: date order (newest first, ties by id), salary order over it. */
function indexOf(jobs: IndexedJob[]): JobIndex {
  const ordered = [...jobs].sort((a, b) => b.posted_at - a.posted_at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
  const high = ordered.map((job) => job.salary_high)
  const salaryOrder = high
    .map((_, p) => p)
    .sort((a, b) => {
      const [sa, sb] = [high[a], high[b]]
      if (sa === undefined || sb === undefined) return sa === sb ? a - b : sa === undefined ? 1 : -1
      return sb - sa || a - b
    })
  return JobIndex.from({ jobs: ordered, salary_order: salaryOrder })
}

const noText = new TextIndex({ terms: [], counts: [] }, new Uint32Array(0), 0)
const contextOf = (index: JobIndex, now = NOW) => ({
  index,
  text: noText,
  now,
  companyIdOf: (slug: string) => slug,
  companySlugOf: (id: string) => id,
})

function parse(query: string) {
  const parsed = parseV2ListQuery(new URLSearchParams(query))
  if (!parsed.ok) throw new Error(`${query}: ${parsed.error.message}`)
  return parsed.value
}

/** Every job's id by page number, in order. */
function byPages(index: JobIndex, query: string, now = NOW): string[] {
  const ids: string[] = []
  for (let page = 1; page < 10_000; page++) {
    const { positions, more } = runV2Query(contextOf(index, now), parse(`${query}&page=${page}`))
    ids.push(...positions.map((p) => index.idAt(p)))
    if (!more) return ids
  }
  throw new Error('runaway paging')
}

/** One page by cursor: its ids and the cursor after it (undefined on the last page). */
function cursorPage(index: JobIndex, query: string, cursor: string | undefined, now = NOW) {
  const parsed = parse(cursor ? `${query}&cursor=${cursor}` : query)
  const { positions, more } = runV2Query(contextOf(index, now), parsed)
  const last = positions.at(-1)
  const next =
    more && last !== undefined ? encodeCursor(jobCursorAt(index, parsed.sort, filtersOf(query), last)) : undefined
  return { ids: positions.map((p) => index.idAt(p)), next }
}

const filtersOf = (query: string) => v2FiltersTag(parse(query))

const QUERIES = [
  'sort=date',
  'sort=salary',
  'sort=date&skills=go',
  'sort=salary&skills=go',
  'sort=salary&work_arrangement=remote',
  'sort=date&salary_min=90000',
  'sort=salary&salary_min=90000',
  'sort=salary&salary_max=80000',
  'sort=date&posted_after=3',
  'sort=salary&posted_after=2',
  'sort=salary&skills=go&salary_min=60000&posted_after=4',
]

describe('runV2Query with a cursor', () => {
  const index = indexOf(makeJobs(600, 7, 'a'))

  it.each(QUERIES)('%s: the same jobs in the same order as page numbers, at every page size', (base) => {
    for (const limit of [1, 7, 100]) {
      const query = `${base}&limit=${limit}`
      const expected = byPages(index, query)
      expect(expected.length).toBeGreaterThan(0)
      const seen: string[] = []
      let cursor: string | undefined
      for (let pages = 0; ; pages++) {
        if (pages > 1000) throw new Error('runaway crawl')
        const page = cursorPage(index, query, cursor)
        expect(page.ids.length).toBe(page.next ? limit : Math.min(limit, expected.length - seen.length))
        seen.push(...page.ids)
        if (!page.next) break
        cursor = page.next
        expect(pages).toBeLessThan(1000)
      }
      expect(seen, `${query}`).toEqual(expected)
    }
  })

  it('a cursor past every job gives an empty last page; total still counts every match', () => {
    const all = byPages(index, 'sort=salary&limit=100')
    const last = index.positionOf(`job-a${Number(all.at(-1)!.split('-').at(-1))}`)!
    const cursor = encodeCursor(jobCursorAt(index, 'salary', filtersOf('sort=salary'), last))
    const result = runV2Query(contextOf(index), parse(`sort=salary&cursor=${cursor}`))
    expect(result).toEqual({ total: all.length, positions: [], more: false })
  })

  it.each(QUERIES)('%s: moving to another index mid-crawl sees every job of both exactly once', (base) => {
    const before = makeJobs(600, 7, 'a')
    // Jobs removed on both sides of any cursor, and new ones (other ids, the same kinds of keys) added.
    const kept = before.filter((_, i) => i % 4 !== 1)
    const after = [...kept, ...makeJobs(150, 99, 'b')]
    const [first, second] = [indexOf(before), indexOf(after)]
    const query = `${base}&limit=4`
    for (const switchAfter of [1, 3, 8]) {
      const seen: string[] = []
      let cursor: string | undefined
      let pages = 0
      for (; ; pages++) {
        if (pages > 1000) throw new Error('runaway crawl')
        const page = cursorPage(pages < switchAfter ? first : second, query, cursor)
        seen.push(...page.ids)
        if (!page.next) break
        cursor = page.next
      }
      expect(new Set(seen).size, 'no job twice').toBe(seen.length)
      const inSecond = new Set(byPages(second, query))
      const inBoth = byPages(first, query).filter((id) => inSecond.has(id))
      expect(inBoth.length).toBeGreaterThan(0)
      expect(
        inBoth.filter((id) => !seen.includes(id)),
        'every job live throughout is seen',
      ).toEqual([])
      expect(pages).toBeGreaterThan(switchAfter)
    }
  })

  it('an expiry mid-crawl skips nothing and repeats nothing', () => {
    const query = 'sort=date&limit=10'
    const later = NOW + 11 * 60_000
    const seen: string[] = []
    let cursor: string | undefined
    for (let pages = 0; ; pages++) {
      if (pages > 1000) throw new Error('runaway crawl')
      const page = cursorPage(index, query, cursor, pages < 3 ? NOW : later)
      seen.push(...page.ids)
      if (!page.next) break
      cursor = page.next
    }
    const liveThroughout = byPages(index, query, later)
    expect(liveThroughout.length).toBeLessThan(byPages(index, query).length)
    expect(new Set(seen).size).toBe(seen.length)
    expect(liveThroughout.filter((id) => !seen.includes(id))).toEqual([])
  })
})

describe('runCompanyQuery with a cursor', () => {
  const next = random(3)
  // Names that tie in the collation (case, accents) so the slug decides.
  const names = ['Acme', 'acme', 'Ácme', 'Beta', 'Gamma', 'gamma', 'Zeta']
  const makeCompanies = (count: number, prefix: string) =>
    Array.from({ length: count }, (_, i) => ({
      id: testUuid(prefix.charCodeAt(0) * 1000 + i),
      slug: `${prefix}-${names[i % names.length]!.toLowerCase()
        .normalize('NFD')
        .replace(/[^a-z]/g, '')}-${i}`,
      name: names[Math.floor(next() * names.length)]!,
      url: 'https://example.com',
      schedule_type: 'standard',
      remote_level: 'fully_remote',
      hires_worldwide: false,
      benefits: [],
      live_jobs: 1,
    }))
  const companies = SnapshotCompanies.parse(makeCompanies(90, 'c'))
  const jobsOf = new Map(companies.map((c) => [c.id, 1 + Math.floor(next() * 4)]))

  const parseCompanies = (query: string) => {
    const parsed = parseV2CompanyQuery(new URLSearchParams(query))
    if (!parsed.ok) throw new Error(parsed.error.message)
    return parsed.value
  }
  function crawl(
    query: string,
    listAt: (page: number) => typeof companies,
    live: (page: number) => Map<string, number>,
  ) {
    const seen: string[] = []
    let cursor: string | undefined
    for (let page = 0; ; page++) {
      if (page > 1000) throw new Error('runaway crawl')
      const parsed = parseCompanies(cursor ? `${query}&cursor=${cursor}` : query)
      const result = runCompanyQuery(CompanyTable.fromCompanies(listAt(page)), live(page), parsed)
      seen.push(...result.page.map((entry) => entry.company.slug))
      const last = result.page.at(-1)
      if (!result.more || !last) return seen
      cursor = encodeCursor(companyCursorAt(last.company, last.liveJobs, parsed.sort, companyFiltersTag(parsed)))
    }
  }

  it.each(['sort=name', 'sort=jobs'])('%s: the same companies in the same order as page numbers', (sort) => {
    for (const limit of [1, 7, 100]) {
      const query = `${sort}&limit=${limit}`
      const pages = runCompanyQuery(
        CompanyTable.fromCompanies(companies),
        jobsOf,
        parseCompanies(`${sort}&limit=100`),
      ).page.map((entry) => entry.company.slug)
      expect(pages.length).toBe(90)
      expect(
        crawl(
          query,
          () => companies,
          () => jobsOf,
        ),
      ).toEqual(pages)
    }
  })

  it('sort=name: companies removed and added mid-crawl, every one listed throughout seen exactly once', () => {
    const after = [...companies.filter((_, i) => i % 3 !== 0), ...SnapshotCompanies.parse(makeCompanies(30, 'n'))]
    const afterJobs = new Map([...after.map((c) => [c.id, jobsOf.get(c.id) ?? 2] as const)])
    for (const switchAt of [1, 4]) {
      const seen = crawl(
        'sort=name&limit=6',
        (page) => (page < switchAt ? companies : after),
        (page) => (page < switchAt ? jobsOf : afterJobs),
      )
      expect(new Set(seen).size).toBe(seen.length)
      const before = new Set(companies.map((c) => c.slug))
      expect(after.filter((c) => before.has(c.slug) && !seen.includes(c.slug))).toEqual([])
    }
  })
})
