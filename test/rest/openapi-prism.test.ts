/**
 * The document is the behaviour, checked by a validator nobody here wrote:
 * Stoplight Prism's validating proxy (`prism proxy --errors`) in front of a
 * real server, fed a corpus of requests covering every parameter of every
 * operation (valid, invalid, repeated, any letter case, empty, huge), 304s,
 * 404s, OPTIONS, 405 and 429.
 *
 * Prism checks each request against the document before forwarding it and
 * each answer against the document before passing it on. So:
 * - a request Prism refuses (422) must be one the server refuses too (400):
 *   the document never forbids what the server accepts, but for one
 *   deliberate strictness: a closed vocabulary (sort, facets,
 *   work_arrangement...) is an enum of its lowercase values, which the server
 *   also takes in any letter case (see `otherCase`);
 * - an answer Prism flags (500, problem+json) fails the test with Prism's
 *   report: the server never answers what the document does not describe;
 * - otherwise Prism's status and body are the server's.
 *
 * Left out, with the reason: HEAD (Prism 5.14 parses the empty body of a
 * JSON HEAD answer and fails; HEAD is checked against GET elsewhere) and
 * malformed percent-escapes in the path (Prism's router throws on them).
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import { createServer } from 'node:net'
import path from 'node:path'
import { parse as parseYaml } from 'yaml'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunningServer } from '../../runtime/index.ts'
import { REPO_ROOT } from '../../support/processes.ts'
import { startFixtureServer, tempDir } from '../support/fixtures.ts'
import { buildRestFixture, type RestFixture } from './support/fixture.ts'

type JsonObject = Record<string, unknown>

interface Case {
  method?: string
  path: string
  headers?: Record<string, string>
  /**
   * A closed vocabulary's value in another letter case (or with blanks): the
   * server takes it, the document lists each value once, in lowercase, as an
   * `enum` (so a generated client types it as a union and a misspelt value
   * does not compile). Prism must refuse it naming the enum, the server must
   * answer 200: the one place the document is deliberately stricter.
   */
  otherCase?: true
}

interface Outcome {
  status: number
  contentType: string
  body: string
  violations: string | null
}

let fixture: RestFixture
let server: RunningServer
let prism: ChildProcess | undefined
let prismUrl: string
let doc: JsonObject
let prismLog = ''

/** A port nothing listens on now (Prism takes a port number, not 0). */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer()
    probe.once('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number }
      probe.close(() => resolve(port))
    })
  })
}

async function startPrism(docPath: string, upstream: string): Promise<string> {
  const port = await freePort()
  const bin = path.join(REPO_ROOT, 'node_modules', '.bin', 'prism')
  prism = spawn(bin, ['proxy', docPath, upstream, '--errors', '--host', '127.0.0.1', '--port', String(port)], {
    cwd: REPO_ROOT,
    // Prism's install pulls in @scarf/scarf, which reports home unless told not to; no color codes in the log.
    env: { ...process.env, SCARF_ANALYTICS: 'false', DO_NOT_TRACK: '1', NO_COLOR: '1', FORCE_COLOR: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const child = prism
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`Prism did not start in 60 s:\n${prismLog}`)), 60_000)
    const onData = (chunk: Buffer) => {
      prismLog += chunk.toString()
      if (prismLog.includes('Prism is listening')) {
        clearTimeout(timer)
        resolve()
      }
    }
    child.stdout?.on('data', onData)
    child.stderr?.on('data', onData)
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`Prism exited with ${code}:\n${prismLog}`))
    })
  })
  return `http://127.0.0.1:${port}`
}

let clientNumber = 0
/**
 * Each case is its own client (X-Forwarded-For, believed from loopback), so
 * the tight rate limit below refuses only the case that is about it.
 */
const nextClient = () => {
  clientNumber++
  return `10.${(clientNumber >> 16) & 255}.${(clientNumber >> 8) & 255}.${clientNumber & 255}`
}

/** Feeds link to themselves by the origin they were asked at: the server's or Prism's. */
const sameOrigin = (body: string) => body.replaceAll(prismUrl, 'ORIGIN').replaceAll(server.url, 'ORIGIN')

/** The body as compared: JSON by value (Prism re-serialises some JSON media types), the rest as text. */
function comparable(outcome: Outcome): string {
  const body = sameOrigin(outcome.body)
  return outcome.contentType.endsWith('json') && body !== '' ? JSON.stringify(JSON.parse(body)) : body
}

async function send(base: string, c: Case, client: string): Promise<Outcome> {
  const res = await fetch(`${base}${c.path}`, {
    method: c.method ?? 'GET',
    headers: { 'x-forwarded-for': client, 'accept-encoding': 'identity', ...c.headers },
    redirect: 'manual',
  })
  return {
    status: res.status,
    contentType: (res.headers.get('content-type') ?? '').split(';')[0]!.trim(),
    body: await res.text(),
    violations: res.headers.get('sl-violations'),
  }
}

beforeAll(async () => {
  fixture = await buildRestFixture({ jobs: 300, companies: 40, seed: 9 })
  // The live clock: the fixture's jobs are dated around now, and Prism sees real time too.
  server = await startFixtureServer(fixture.distDir, { JOBSNAP_REST_LIMIT: 3, JOBSNAP_TRUST_PROXY: '127.0.0.1' })
  const res = await fetch(`${server.url}/openapi.yaml`)
  expect(res.status).toBe(200)
  const text = await res.text()
  doc = parseYaml(text) as JsonObject
  const dir = await tempDir('prism')
  const docPath = path.join(dir, 'openapi.yaml')
  await writeFile(docPath, text)
  prismUrl = await startPrism(docPath, server.url)
}, 120_000)

afterAll(async () => {
  prism?.kill()
  await server?.close()
  await fixture?.cleanup()
})

/** The requests: built from the data being served, so valid ones find something. */
async function corpus(): Promise<Case[]> {
  const json = async <T>(p: string): Promise<T> =>
    (await (await fetch(`${server.url}${p}`, { headers: { 'x-forwarded-for': nextClient() } })).json()) as T
  const filters = await json<Record<string, { value: string }[]>>('/api/v2/filters')
  const jobList = await json<{ data: { slug: string; company?: { slug: string } }[]; next_cursor: string }>(
    '/api/v2/jobs?limit=5',
  )
  const jobs = jobList.data
  const companyList = await json<{ data: { slug: string }[]; next_cursor: string }>('/api/v2/companies?limit=3')
  const companies = companyList.data
  const snapshotId = (
    await fetch(`${server.url}/api/v2/filters`, { headers: { 'x-forwarded-for': nextClient() } })
  ).headers.get('x-snapshot-id')!
  const first = (name: string, n = 0) => filters[name]![n]!.value
  const job = jobs[0]!.slug
  const company = companies[0]!.slug
  const v2: string[] = [
    '',
    'page=2&limit=10',
    'page=0',
    'page=-3',
    'page=',
    'page=999999',
    'page=99999999999999999999',
    'limit=0',
    'limit=500',
    'limit=99999999999999999999',
    'limit= 7 ',
    `category=${first('category')}`,
    `category=${first('category').toUpperCase()}`,
    `category=${first('category')},${first('category', 1)}`,
    `category=${first('category')}&category=${first('category', 1)}`,
    'category=',
    'category=no-such-category',
    `level=${first('level')}&level=${first('level', 1)}`,
    `schedule=${first('schedule')},${first('schedule', 1)}`,
    'work_arrangement=remote',
    'work_arrangement=REMOTE,hybrid&work_arrangement=onsite',
    `skills=${first('skills')}&skills=${first('skills', 1)}`,
    `company=${company}`,
    `company=${company.toUpperCase()},no-such-company`,
    `country=${first('country')}`,
    'country=germany&country=FR',
    `office_country=${first('office_country')}`,
    'office_country=germany,FR&office_country=no-such-country',
    `limit=5&cursor=${encodeURIComponent(jobList.next_cursor)}`,
    'cursor=',
    'salary_min=50000',
    'salary_min=0&salary_max=200000',
    'salary_min=99999999999999999999',
    'posted_after=7',
    'posted_after=0',
    'posted_after=5000',
    'q=engineer',
    'q=',
    `q=${encodeURIComponent('senior  data')}`,
    'sort=salary',
    'sort=',
    // Not here: a single-valued parameter given twice with the same value (sort=date&sort=date). The server
    // takes it as one value; the document says one value, so Prism refuses it. A deliberate leniency.
    'facets=category,schedule',
    'facets=skills&facets=country,company',
    'facets=category&category=no-such-category',
    'locaton=DE',
    // Refused by the server; Prism must refuse them or pass the 400 on.
    'sort=bogus',
    'sort=salary&sort=date',
    'page=x',
    'page=1.5',
    'limit=ten',
    'limit=10&limit=20',
    'salary_min=-1',
    'salary_min=9&salary_max=1',
    'salary_max=abc',
    'posted_after=z',
    'posted_after=-2',
    'work_arrangement=moon',
    'facets=bogus',
    `q=${'q'.repeat(201)}`,
    'q=a&q=b',
    'cursor=not-a-cursor',
    `page=2&cursor=${encodeURIComponent(jobList.next_cursor)}`,
  ]
  const companyQueries = [
    '',
    'limit=2&page=2',
    'page=0&limit=500',
    'q=a',
    `country=${first('country')}&country=de`,
    `schedule=${first('schedule')}`,
    'remote_level=fully_remote,ONSITE&remote_level=remote_friendly',
    'hires_worldwide=true',
    'hires_worldwide=false',
    'hires_worldwide=',
    'sort=jobs',
    `limit=3&cursor=${encodeURIComponent(companyList.next_cursor)}`,
    'cursor=%%%',
    'remote_level=sometimes',
    'hires_worldwide=maybe',
    'sort=size',
    'page=two',
    `q=${'z'.repeat(201)}`,
  ]
  // A feed takes the list's filters and names page, limit, sort and facets as ignored: the same queries.
  const feedQueries = v2
  const otherCase: Case[] = [
    ...['sort=SALARY', 'sort= date ', 'facets=LEVEL,work_arrangement', 'work_arrangement=Remote'].map((q) => ({
      path: `/api/v2/jobs?${q}`,
    })),
    ...['hires_worldwide=FALSE', 'sort=Name', 'remote_level=ONSITE'].map((q) => ({ path: `/api/v2/companies?${q}` })),
  ].map((c) => ({ ...c, otherCase: true }))
  const cases: Case[] = [
    ...otherCase,
    ...v2.map((q) => ({ path: `/api/v2/jobs${q ? `?${q}` : ''}` })),
    ...companyQueries.map((q) => ({ path: `/api/v2/companies${q ? `?${q}` : ''}` })),
    ...['json', 'rss', 'atom'].flatMap((format) =>
      feedQueries.map((q) => ({ path: `/feeds/jobs.${format}${q ? `?${q}` : ''}` })),
    ),
    ...[
      '',
      '?page=2&limit=5',
      '?page=abc&limit=-5',
      '?page=2&page=3',
      '?limit=1000',
      '?page=999',
      '?sort=x&limit=',
    ].map((q) => ({ path: `/api/v1${q}` })),
    ...jobs.map((j) => ({ path: `/api/v2/jobs/${j.slug}` })),
    { path: `/api/v2/jobs/${job.toUpperCase()}` },
    { path: '/api/v2/jobs/no-such-job' },
    { path: '/api/v2/jobs/a%20b' },
    ...companies.map((c) => ({ path: `/api/v2/companies/${c.slug}` })),
    { path: '/api/v2/companies/no-such-company' },
    { path: '/api/v2/filters' },
    { path: '/api/v2/filters?x=1' },
    { path: `/api/v2/changes?since=${snapshotId}` },
    { path: '/api/v2/changes' },
    { path: '/api/v2/changes?since=yesterday' },
    { path: '/api/v2/changes?since=20200101T000000000Z-00000000' },
    { path: `/api/v2/changes?since=${snapshotId}&since=20200101T000000000Z-00000000` },
    { path: '/api/v2/exports' },
    { path: '/api/v2/exports/companies.ndjson.gz' },
    { path: '/api/v2/exports/jobs.parquet', headers: { range: 'bytes=-8' } },
    { path: '/api/v2/exports/companies.ndjson.gz', headers: { range: 'bytes=0-99', 'if-range': '"stale"' } },
    { path: '/api/v2/exports/companies.ndjson.gz', headers: { range: 'bytes=999999999-' } },
    ...['/api/v1', '/api/v2/jobs', `/api/v2/jobs/${job}`, '/api/v2/companies', `/api/v2/companies/${company}`].flatMap(
      (p) => [
        {
          method: 'OPTIONS',
          path: p,
          headers: { origin: 'https://example.org', 'access-control-request-method': 'GET' },
        },
        { method: 'POST', path: p },
        { method: 'DELETE', path: p },
      ],
    ),
  ]
  // 304s: the ETag of a first answer, sent back.
  for (const p of [
    '/api/v1',
    '/api/v2/jobs?limit=3',
    `/api/v2/jobs/${job}`,
    '/api/v2/companies',
    `/api/v2/companies/${company}`,
    '/api/v2/filters',
    '/feeds/jobs.json',
    '/feeds/jobs.rss?category=x',
    '/feeds/jobs.atom?q=engineer',
    `/api/v2/changes?since=${snapshotId}`,
    '/api/v2/exports',
    '/api/v2/exports/companies.ndjson.gz',
  ]) {
    // Each encoding has its own tag: the identity one, asked for again as identity.
    const first = await fetch(`${server.url}${p}`, {
      headers: { 'x-forwarded-for': nextClient(), 'accept-encoding': 'identity' },
    })
    const etag = first.headers.get('etag')!
    cases.push({ path: p, headers: { 'if-none-match': etag, 'accept-encoding': 'identity' } })
    // A feed reader that keeps only the date.
    cases.push({ path: p, headers: { 'if-modified-since': first.headers.get('last-modified')! } })
  }
  return cases
}

describe('Prism, validating both ways, in front of a real server', () => {
  it('refuses only what the server refuses, and finds every answer as documented', async () => {
    const cases = await corpus()
    const problems: string[] = []
    const tally = new Map<string, number>()
    for (const c of cases) {
      const what = `${c.method ?? 'GET'} ${c.path}${c.headers?.['if-none-match'] ? ' (If-None-Match)' : ''}`
      const direct = await send(server.url, c, nextClient())
      const proxied = await send(prismUrl, c, nextClient())
      const key = `${direct.status}->${proxied.status}`
      tally.set(key, (tally.get(key) ?? 0) + 1)
      if (proxied.violations) problems.push(`${what}: Prism reports ${proxied.violations}`)
      if (c.otherCase) {
        const refusedAsEnum = proxied.status === 422 && /"code":"enum"/.test(proxied.body)
        if (direct.status !== 200 || !refusedAsEnum)
          problems.push(
            `${what}: expected 200 direct and 422 (enum) via Prism, got ${direct.status}, ${proxied.status}`,
          )
        continue
      }
      if (proxied.status === 422 && proxied.contentType === 'application/problem+json') {
        if (direct.status !== 400)
          problems.push(`${what}: the document refuses a request the server answers ${direct.status}: ${proxied.body}`)
        continue
      }
      // Undocumented methods: Prism answers 405 itself, as the server does.
      if (c.method === 'POST' || c.method === 'DELETE') {
        if (direct.status !== 405 || proxied.status !== 405)
          problems.push(`${what}: expected 405 both ways, got ${direct.status} direct, ${proxied.status} via Prism`)
        continue
      }
      if (proxied.contentType === 'application/problem+json')
        problems.push(`${what}: Prism ${proxied.status}: ${proxied.body}`)
      else if (proxied.status !== direct.status || comparable(proxied) !== comparable(direct))
        problems.push(`${what}: ${direct.status} direct but ${proxied.status} via Prism`)
    }
    console.log(
      `[prism] ${cases.length} requests; direct->proxied statuses: ${[...tally].map(([k, n]) => `${k} x${n}`).join(', ')}`,
    )
    expect(problems).toEqual([])
    // The corpus reaches every documented status of the jobs list, and Prism refused some bad requests itself.
    expect(tally.get('200->200')).toBeGreaterThan(80)
    expect(tally.get('200->422')).toBe(7)
    expect(tally.get('304->304')).toBe(22)
    expect(tally.get('400->422')).toBeGreaterThan(10)
    expect(tally.get('404->404')).toBeGreaterThanOrEqual(4)
    expect(tally.get('204->204')).toBe(5)
  }, 180_000)

  it('a 429 passes through as documented', async () => {
    const client = nextClient()
    const statuses: number[] = []
    let last: Outcome | undefined
    for (let i = 0; i < 5; i++) {
      last = await send(prismUrl, { path: '/api/v2/jobs?limit=1' }, client)
      statuses.push(last.status)
    }
    expect(statuses).toEqual([200, 200, 200, 429, 429])
    expect(last!.contentType).toBe('application/json')
    expect(last!.violations).toBeNull()
  })

  it('the corpus uses every parameter of every operation', async () => {
    const cases = await corpus()
    const unused: string[] = []
    for (const [route, item] of Object.entries(doc.paths as Record<string, Record<string, JsonObject>>)) {
      const pattern = new RegExp(`^${route.replace(/\{[^}]+\}/g, '[^/?]+').replace(/\./g, '\\.')}(\\?|$)`)
      const mine = cases.filter((c) => pattern.test(c.path))
      for (const parameter of (item.get!.parameters as JsonObject[]) ?? []) {
        const name = String(parameter.name)
        const used =
          parameter.in === 'header'
            ? mine.some((c) => c.headers?.[name.toLowerCase()] !== undefined)
            : parameter.in === 'path'
              ? mine.length > 0
              : mine.some((c) => new URL(c.path, 'http://x').searchParams.has(name))
        if (!used) unused.push(`${route} ${name}`)
      }
    }
    expect(unused).toEqual([])
  })

  it('catches a document that forbids what the server accepts (the check can fail)', async () => {
    // The same Prism, pointed at a copy of the document whose limit says at most 10.
    const broken = structuredClone(doc)
    const params = ((broken.paths as JsonObject)['/api/v2/jobs'] as { get: { parameters: JsonObject[] } }).get
      .parameters
    const limit = params.find((p) => p.name === 'limit')!
    limit.schema = { ...(limit.schema as JsonObject), maximum: 10 }
    const dir = await tempDir('prism-broken')
    const brokenPath = path.join(dir, 'openapi.yaml')
    await writeFile(brokenPath, JSON.stringify(broken))
    const original = prism
    const originalLog = prismLog
    prismLog = ''
    try {
      const url = await startPrism(brokenPath, server.url)
      const proxied = await send(url, { path: '/api/v2/jobs?limit=50' }, nextClient())
      const direct = await send(server.url, { path: '/api/v2/jobs?limit=50' }, nextClient())
      expect(direct.status).toBe(200)
      expect(proxied.status).toBe(422)
    } finally {
      prism?.kill()
      prism = original
      prismLog = originalLog
    }
  }, 120_000)
})
