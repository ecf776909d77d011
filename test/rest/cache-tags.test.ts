/**
 * The headers only shared caches read (docs/api.md: Caching): cache tags on
 * every cacheable response in the three CDN spellings, on the fast path and
 * the routed one, kept on 304, never on errors; and the shared lifetime,
 * sent only when configured, beside an unchanged Cache-Control.
 */
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ALL_TAG, fittingTags, isTag, MAX_TAG_BYTES, MAX_TAG_HEADER_BYTES, tagHeaderValues } from '../../core/index.ts'
import type { RunningServer } from '../../runtime/index.ts'
import { FIXTURE_NOW, startFixtureServer } from '../support/fixtures.ts'
import { buildRestFixture, type RestFixture } from './support/fixture.ts'

const NOW = FIXTURE_NOW.getTime()

let fixture: RestFixture
let slug: string
let companySlug: string

beforeAll(async () => {
  fixture = await buildRestFixture({ jobs: 300, companies: 40, seed: 3 })
  slug = fixture.oracle.live(NOW)[5]!.raw.slug
})

afterAll(async () => {
  await fixture?.cleanup()
})

/** The tags a response carries, read from each of the three headers (undefined where a header is absent). */
function tagsOf(response: Response): Record<string, string[] | undefined> {
  const split = (name: string, separator: string) => response.headers.get(name)?.split(separator)
  return {
    'surrogate-key': split('surrogate-key', ' '),
    'cache-tag': split('cache-tag', ','),
    xkey: split('xkey', ' '),
  }
}

function expectTags(response: Response, tags: string[], what: string): void {
  expect(response.status, what).toBeLessThan(400)
  for (const [name, found] of Object.entries(tagsOf(response))) expect(found, `${what}: ${name}`).toEqual(tags)
}

describe('cache tags, default configuration', () => {
  let server: RunningServer

  beforeAll(async () => {
    server = await startFixtureServer(fixture.distDir, { JOBSNAP_REST_LIMIT: 100_000 })
    const companies = (await (await fetch(`${server.url}/api/v2/companies?limit=1`)).json()) as {
      data: { slug: string }[]
    }
    companySlug = companies.data[0]!.slug
  })
  afterAll(async () => {
    await server?.close()
  })

  const get = (path: string, headers: Record<string, string> = {}) =>
    fetch(`${server.url}${path}`, { headers, redirect: 'manual' })

  it('tags each kind of response with its scheme and `all`, in all three headers', async () => {
    const cases: [string, string[]][] = [
      [`/api/v2/jobs/${slug}`, [`job:${slug}`, 'all']],
      [`/api/v2/companies/${companySlug}`, [`company:${companySlug}`, 'all']],
      ['/api/v1', ['v1:25:1', 'all']],
      ['/api/v1?page=2&limit=100', ['v1:100:2', 'all']],
      // Clamped and lenient as v1 answers: the tag names the page answered.
      ['/api/v1?page=0&limit=abc', ['v1:25:1', 'all']],
      // A size the build does not write, and a page past the end, are computed per query: also `lists`.
      ['/api/v1?limit=7&page=3', ['v1:7:3', 'lists', 'all']],
      ['/api/v1?page=999', ['v1:25:999', 'lists', 'all']],
      ['/api/v2/jobs', ['lists', 'all']],
      ['/api/v2/jobs?q=engineer&facets=level', ['lists', 'all']],
      ['/api/v2/companies', ['lists', 'all']],
      ['/api/v2/filters', ['lists', 'all']],
      ['/feeds/jobs.rss', ['lists', 'all']],
      ['/feeds/jobs.atom', ['lists', 'all']],
      ['/feeds/jobs.json?level=senior', ['lists', 'all']],
      ['/openapi.yaml', ['docs', 'all']],
      ['/docs', ['docs', 'all']],
      ['/docs/assets/init.js', ['docs', 'all']],
      ['/', ['all']],
      ['/api/v2/exports', ['lists', 'all']],
      ['/api/v2/exports/jobs.ndjson.gz', ['exports', 'all']],
      ['/api/v2/exports/jobs.parquet', ['exports', 'all']],
    ]
    for (const [path, tags] of cases) expectTags(await get(path), tags, path)
    const snapshotId = (await get('/api/v2/filters')).headers.get('x-snapshot-id')!
    expectTags(await get(`/api/v2/changes?since=${snapshotId}`), ['lists', 'all'], 'changes')
  })

  it('keeps the tags on HEAD, on 304 and in every encoding', async () => {
    const path = `/api/v2/jobs/${slug}`
    const first = await get(path)
    expectTags(await fetch(`${server.url}${path}`, { method: 'HEAD' }), [`job:${slug}`, 'all'], 'HEAD')
    const notModified = await get(path, { 'if-none-match': first.headers.get('etag')! })
    expect(notModified.status).toBe(304)
    expectTags(notModified, [`job:${slug}`, 'all'], '304')
    const list = await get('/api/v2/jobs', { 'accept-encoding': 'br' })
    expect(list.headers.get('content-encoding')).toBe('br')
    expectTags(list, ['lists', 'all'], 'br list')
  })

  it('puts no tags and no shared lifetime on errors, redirects and operational endpoints', async () => {
    for (const path of [
      '/api/v2/jobs/no-such-job',
      '/api/v2/companies/no-such-company',
      '/api/v2/jobs?page=abc',
      '/api/v2/jobs/',
      '/feeds/jobs.rss?salary_min=-1',
      '/api/v2/changes',
      '/nowhere',
      '/docs/assets/nothing.js',
      '/health',
      '/ready',
    ]) {
      const response = await get(path)
      for (const name of ['surrogate-key', 'cache-tag', 'xkey', 'cdn-cache-control', 'surrogate-control'])
        expect(response.headers.get(name), `${path}: ${name}`).toBeNull()
    }
  })

  it('sends no shared lifetime unless configured, and Cache-Control stays the browsers’ 60 seconds', async () => {
    const response = await get(`/api/v2/jobs/${slug}`)
    expect(response.headers.get('cache-control')).toBe('public, max-age=60')
    expect(response.headers.get('cdn-cache-control')).toBeNull()
    expect(response.headers.get('surrogate-control')).toBeNull()
  })

  it('does not expose the tags to browsers (CORS): they are for the caches in front', async () => {
    const exposed = (await get('/api/v1')).headers.get('access-control-expose-headers')!.toLowerCase()
    for (const name of ['surrogate-key', 'cache-tag', 'xkey']) expect(exposed).not.toContain(name)
  })
})

describe('cache tags and shared lifetime, configured', () => {
  it('sends only the tag headers asked for, and the shared lifetime with its stale windows', async () => {
    const server = await startFixtureServer(fixture.distDir, {
      JOBSNAP_CACHE_TAG_HEADERS: 'Cache-Tag, xkey',
      JOBSNAP_CDN_TTL: 3600,
      JOBSNAP_CDN_STALE_WHILE_REVALIDATE: 30,
      JOBSNAP_CDN_STALE_IF_ERROR: 600,
    })
    try {
      for (const path of [`/api/v2/jobs/${slug}`, '/api/v1?page=2', '/api/v2/jobs?limit=3', '/openapi.yaml']) {
        const response = await fetch(`${server.url}${path}`)
        expect(response.status, path).toBe(200)
        expect(response.headers.get('surrogate-key'), path).toBeNull()
        expect(response.headers.get('cache-tag'), path).toMatch(/,all$/)
        expect(response.headers.get('xkey'), path).toMatch(/ all$/)
        expect(response.headers.get('cache-control'), path).toBe('public, max-age=60')
        const lifetime = 'max-age=3600, stale-while-revalidate=30, stale-if-error=600'
        expect(response.headers.get('cdn-cache-control'), path).toBe(lifetime)
        expect(response.headers.get('surrogate-control'), path).toBe(lifetime)
      }
      const missing = await fetch(`${server.url}/api/v2/jobs/no-such-job`)
      expect(missing.status).toBe(404)
      expect(missing.headers.get('cdn-cache-control')).toBeNull()
      expect(missing.headers.get('cache-control')).toBe('no-store')
    } finally {
      await server.close()
    }
  })

  it('sends no tag header at all with `none`, and refuses an unknown header name', async () => {
    const server = await startFixtureServer(fixture.distDir, { JOBSNAP_CACHE_TAG_HEADERS: 'none' })
    try {
      const response = await fetch(`${server.url}/api/v2/jobs/${slug}`)
      for (const name of ['surrogate-key', 'cache-tag', 'xkey']) expect(response.headers.get(name)).toBeNull()
    } finally {
      await server.close()
    }
    await expect(startFixtureServer(fixture.distDir, { JOBSNAP_CACHE_TAG_HEADERS: 'surrogate-keys' })).rejects.toThrow(
      /JOBSNAP_CACHE_TAG_HEADERS/,
    )
  })
})

describe('tags within the CDNs’ limits', () => {
  it('leaves out a tag no cache could purge, and never `all`', () => {
    const long = `job:${'a'.repeat(MAX_TAG_BYTES)}`
    expect(fittingTags([long, 'job:ok'])).toEqual(['job:ok', ALL_TAG])
    expect(fittingTags([`job:${'a'.repeat(MAX_TAG_BYTES - 4)}`])).toHaveLength(2)
    // A space or a comma would split the tag in one of the three headers.
    expect(fittingTags(['job:a b', 'job:a,b', '', 'all', 'lists', 'lists'])).toEqual(['lists', ALL_TAG])
    expect(isTag('v1:25:3')).toBe(true)
    expect(isTag('jöb')).toBe(false)
  })

  it('tests a tag as visible ASCII without commas, and joins any tags as fittingTags keeps them', () => {
    const tagText = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 12 }),
      fc.string({
        unit: fc.constantFrom('a', 'z', '0', ':', '-', ' ', ',', '!', '~', '\x7f', '\t', 'é'),
        maxLength: 12,
      }),
      fc.constantFrom(ALL_TAG, 'lists', '', `job:${'a'.repeat(MAX_TAG_BYTES - 4)}`, `job:${'a'.repeat(MAX_TAG_BYTES)}`),
    )
    fc.assert(
      fc.property(tagText, (text) => {
        expect(isTag(text)).toBe(/^[\x21-\x2b\x2d-\x7e]+$/.test(text))
      }),
      { numRuns: 2000 },
    )
    // A single tag (a job, a v1 page) takes a shorter way than several: both give what fittingTags keeps.
    fc.assert(
      fc.property(fc.array(tagText, { minLength: 1, maxLength: 3 }), (tags) => {
        const kept = fittingTags(tags)
        expect(tagHeaderValues(tags)).toEqual({ spaced: kept.join(' '), commas: kept.join(',') })
      }),
      { numRuns: 2000 },
    )
  })

  it('keeps one header within 16 KB, `all` included', () => {
    const many = Array.from({ length: 100 }, (_, i) => `company:${String(i).padStart(500, '0')}`)
    const kept = fittingTags(many)
    expect(kept.at(-1)).toBe(ALL_TAG)
    expect(kept.join(' ').length).toBeLessThanOrEqual(MAX_TAG_HEADER_BYTES)
    expect(kept.join(' ').length).toBeGreaterThan(MAX_TAG_HEADER_BYTES - 520)
  })
})
