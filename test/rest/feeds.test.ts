/**
 * Job feeds (docs/api.md: Feeds): RSS 2.0 and Atom read back with an
 * independent parser (@rowanmanning/feed-parser), JSON Feed validated
 * against the published JSON Feed 1.1 schema (jsonfeed-schema, with ajv),
 * and every feed's entries checked against the REST oracle: the newest 50
 * live jobs matching the filters.
 */
import { parseFeed } from '@rowanmanning/feed-parser'
import { Ajv } from 'ajv'
import addFormats from 'ajv-formats'
import jsonFeedSchema from 'jsonfeed-schema/schema-v1.1.json' with { type: 'json' }
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunningServer } from '../../runtime/index.ts'
import { rawGet, targetOf } from '../../support/raw-http.ts'
import { FIXTURE_NOW, startFixtureServer } from '../support/fixtures.ts'
import { buildRestFixture, type RestFixture } from './support/fixture.ts'
import type { FilterSpec, OracleJob } from './support/oracle.ts'

let fixture: RestFixture
let server: RunningServer
const now = FIXTURE_NOW.getTime()

beforeAll(async () => {
  fixture = await buildRestFixture({ jobs: 600, companies: 80, seed: 7 })
  server = await startFixtureServer(fixture.distDir, { JOBSNAP_REST_LIMIT: 100_000 })
})

afterAll(async () => {
  await server?.close()
  await fixture?.cleanup()
})

const SPECS: [string, FilterSpec][] = [
  ['', {}],
  ['category=engineering', { category: ['engineering'] }],
  ['country=DE&work_arrangement=remote,hybrid', { country: 'DE', work_arrangement: ['remote', 'hybrid'] }],
  ['schedule=4_day_week&salary_min=40000', { schedule: ['4_day_week'], salary_min: 40_000 }],
  ['office_country=DE,fr', { office_country: ['DE', 'fr'] }],
  ['category=astronaut', { category: ['astronaut'] }],
]

const newest50 = (spec: FilterSpec): OracleJob[] => fixture.oracle.query(spec, now).slice(0, 50)

async function get(path: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${server.url}${path}`, { headers })
  return { response, text: await response.text() }
}

describe('RSS and Atom', () => {
  it.each(['rss', 'atom'] as const)(
    '%s: the newest 50 matching jobs, newest first, read back by an independent parser',
    async (format) => {
      for (const [query, spec] of SPECS) {
        const { response, text } = await get(`/feeds/jobs.${format}${query ? `?${query}` : ''}`)
        expect(response.status, query).toBe(200)
        expect(response.headers.get('content-type')).toBe(`application/${format}+xml; charset=utf-8`)
        const feed = parseFeed(text)
        const expected = newest50(spec)
        expect(
          feed.items.map((item) => item.url),
          `${format}?${query}`,
        ).toEqual(expected.map((job) => job.raw.url))
        feed.items.forEach((item, i) => {
          const job = expected[i]!
          expect(item.title).toBe(`${job.raw.title} at ${job.company.name}`)
          expect(item.published?.getTime()).toBe(job.postedMs - (job.postedMs % 1000))
          expect(item.id).toBe(job.raw.url)
          // The employer, read back as the author: RSS's dc:creator, Atom's <author><name>.
          expect(item.authors.map((author) => author.name)).toEqual([job.company.name])
        })
        expect(feed.title).toMatch(/^jobsnap: /)
        expect(feed.self).toContain(`/feeds/jobs.${format}`)
        // RSS 2.0's <author> must be an e-mail address: none is written (dc:creator names the employer).
        if (format === 'rss') expect(text).not.toContain('<author>')
        else expect((text.match(/<author>\s*<name>/g) ?? []).length).toBe(expected.length)
      }
    },
  )
})

describe('links from the configured public address', () => {
  it('self links, Atom ids and feed_url name the site URL, whatever Host or forwarded headers say', async () => {
    const site = 'https://jobsnap.example'
    const target = targetOf(server.url)
    for (const format of ['rss', 'atom', 'json'] as const) {
      const path = `/feeds/jobs.${format}?category=engineering`
      const asked = (
        [
          {},
          { host: 'evil.example' },
          { host: 'localhost:1', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'evil.example' },
        ] as Record<string, string>[]
      ).map((headers) => rawGet(target, path, headers))
      const answers = await Promise.all(asked)
      for (const answer of answers) {
        expect(answer.status).toBe(200)
        expect(answer.text, 'one body whatever the Host').toBe(answers[0]!.text)
        expect(answer.text).not.toMatch(/evil\.example|127\.0\.0\.1|localhost/)
      }
      const text = answers[0]!.text
      if (format === 'json') {
        expect(JSON.parse(text).feed_url).toBe(`${site}/feeds/jobs.json?category=engineering`)
      } else {
        const feed = parseFeed(text)
        expect(feed.self).toBe(`${site}/feeds/jobs.${format}?category=engineering`)
        if (format === 'atom')
          expect(/<id>([^<]*)<\/id>/.exec(text)?.[1]).toBe(`${site}/feeds/jobs.atom?category=engineering`)
      }
    }
  })
})

describe('XML the strictest reader takes', () => {
  // XML 1.0's Char production (section 2.2): anything else makes the whole document unreadable.
  const notXmlChar = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u

  it.each(['rss', 'atom'] as const)('%s: a control character or U+FFFE in q reaches no feed', async (format) => {
    // (A lone surrogate cannot arrive in a URL: its UTF-8 bytes decode to U+FFFD before the server sees them.)
    for (const q of ['%01x', '%EF%BF%BE', 'a%00b']) {
      const { response, text } = await get(`/feeds/jobs.${format}?q=${q}`)
      expect(response.status, q).toBe(200)
      expect(text.match(notXmlChar), `${format}?q=${q}`).toBeNull()
      expect(text, 'the title keeps the readable rest').toMatch(/<title>jobsnap: [^<]*\uFFFD/)
    }
  })

  it('atom: every category has the term Atom requires, the value a filter takes', async () => {
    const { text } = await get('/feeds/jobs.atom?schedule=4_day_week')
    const categories = text.match(/<category [^>]*>/g) ?? []
    expect(categories.length).toBeGreaterThan(50)
    for (const category of categories) expect(category).toMatch(/ term="(category|level|schedule):[a-z0-9_-]+"/)
    expect(text).toContain('term="schedule:4_day_week"')
  })
})

describe('JSON Feed', () => {
  const ajv = new Ajv({ allErrors: true, strict: false })
  addFormats.default(ajv)
  const validate = ajv.compile(jsonFeedSchema)

  it('is valid JSON Feed 1.1 and lists the newest 50 matching jobs', async () => {
    for (const [query, spec] of SPECS) {
      const { response, text } = await get(`/feeds/jobs.json${query ? `?${query}` : ''}`)
      expect(response.status).toBe(200)
      expect(response.headers.get('content-type')).toBe('application/feed+json; charset=utf-8')
      const feed = JSON.parse(text) as {
        version: string
        items: { url: string; date_published: string; authors?: { name: string }[] }[]
      }
      expect(validate(feed), JSON.stringify(validate.errors)).toBe(true)
      expect(feed.version).toBe('https://jsonfeed.org/version/1.1')
      const expected = newest50(spec)
      expect(feed.items.map((item) => item.url)).toEqual(expected.map((job) => job.raw.url))
      expect(feed.items.map((item) => item.authors?.[0]?.name)).toEqual(expected.map((job) => job.company.name))
    }
  })

  it('the validator really validates: a feed without items or with a bad version fails', () => {
    expect(validate({ version: 'https://jsonfeed.org/version/1.1', title: 'x' })).toBe(false)
    expect(validate({ version: 'rss', title: 'x', items: [] })).toBe(false)
  })
})

describe('feeds follow the REST rules', () => {
  it('send Last-Modified and answer If-Modified-Since with 304; If-None-Match, when sent, decides alone', async () => {
    for (const format of ['rss', 'atom', 'json']) {
      const path = `/feeds/jobs.${format}?category=engineering`
      const first = await get(path)
      const lastModified = first.response.headers.get('last-modified')!
      expect(lastModified, format).toMatch(/^[A-Z][a-z]{2}, \d\d [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d GMT$/)
      const since = Date.parse(lastModified)
      const asked = async (headers: Record<string, string>) => (await get(path, headers)).response
      const unchanged = await asked({ 'if-modified-since': lastModified })
      expect(unchanged.status, format).toBe(304)
      expect(unchanged.headers.get('last-modified')).toBe(lastModified)
      expect(unchanged.headers.get('etag')).toBe(first.response.headers.get('etag'))
      expect((await asked({ 'if-modified-since': new Date(since + 60_000).toUTCString() })).status).toBe(304)
      expect((await asked({ 'if-modified-since': new Date(since - 1000).toUTCString() })).status).toBe(200)
      expect((await asked({ 'if-modified-since': 'not a date' })).status).toBe(200)
      // A tag that does not match wins over a date that does (RFC 9110 13.2.2).
      expect((await asked({ 'if-modified-since': lastModified, 'if-none-match': '"other"' })).status).toBe(200)
    }
  })

  it('answers If-None-Match with 304, caches, limits, and names parameters a feed does not take', async () => {
    const first = await get('/feeds/jobs.rss?category=engineering&page=2&sort=salary&limit=5&locaton=DE')
    expect(first.response.status).toBe(200)
    expect(first.response.headers.get('x-ignored-parameters')).toBe('page, sort, limit, locaton')
    expect(first.response.headers.get('cache-control')).toBe('public, max-age=60')
    expect(first.response.headers.get('x-ratelimit-limit')).toBeTruthy()
    const etag = first.response.headers.get('etag')!
    const again = await get('/feeds/jobs.rss?category=engineering', { 'if-none-match': etag })
    expect(again.response.status).toBe(304)
    expect(again.response.headers.get('x-cache')).toBe('HIT')
  })

  it('refuses a bad filter with the v2 error body, and other methods with 405', async () => {
    const bad = await get('/feeds/jobs.atom?work_arrangement=moon')
    expect(bad.response.status).toBe(400)
    expect(JSON.parse(bad.text).error.field).toBe('work_arrangement')
    const post = await fetch(`${server.url}/feeds/jobs.json`, { method: 'POST' })
    expect(post.status).toBe(405)
  })
})
