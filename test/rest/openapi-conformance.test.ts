/**
 * Responses against the OpenAPI document the server itself serves
 * (docs/api.md): the document is valid OpenAPI 3.1, lists the three
 * REST operations and every v2 parameter, and real responses (v1 pages, v2
 * lists under various filters, single jobs, 304, 400, 404, 405, 429) match
 * the schemas and headers it documents for their status.
 *
 * Validator: @hyperjump/json-schema, `openapi-3-1` entry point. It is written
 * by a JSON Schema specification author, passes the official JSON Schema Test
 * Suite for 2020-12, and ships the OpenAPI 3.1 meta-schemas and the OAS base
 * dialect (2020-12 plus discriminator/example/xml/externalDocs). So it can
 * (1) validate the document itself as OpenAPI 3.1, and (2) validate a value
 * against any schema location inside the document, resolving
 * `#/components/schemas/...` references in the document's own dialect. Ajv's
 * 2020 build validates plain JSON Schema but knows neither the OAS dialect
 * nor the OpenAPI document structure, so it would need the document taken
 * apart by hand first.
 */
// The format validators (uuid, uri, date-time, ...) are a separate entry point.
import '@hyperjump/json-schema/formats'
import {
  registerSchema,
  setShouldValidateFormat,
  validate,
  type OutputUnit,
  type SchemaObject,
} from '@hyperjump/json-schema/openapi-3-1'
import { parse as parseYaml } from 'yaml'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunningServer } from '../../runtime/index.ts'
import { FIXTURE_NOW, startFixtureServer } from '../support/fixtures.ts'
import { buildRestFixture, type RestFixture } from './support/fixture.ts'
import { request, type JsonResponse, type V2Job, type V2ListResponse } from './support/http.ts'

const NOW = FIXTURE_NOW.getTime()
const OAS_31_DIALECT = 'https://spec.openapis.org/oas/3.1/schema-base'
/** Every parameter GET /api/v2/jobs takes (docs/api.md: Parameters (v2)). */
const V2_PARAMS = [
  'page',
  'limit',
  'category',
  'level',
  'schedule',
  'work_arrangement',
  'skills',
  'country',
  'salary_min',
  'salary_max',
  'posted_after',
  'q',
  'sort',
]

type Json = null | boolean | number | string | Json[] | { [key: string]: Json }
type JsonObject = { [key: string]: Json }

let fixture: RestFixture
let server: RunningServer
let base: string
let doc: JsonObject
let docUri: string

beforeAll(async () => {
  fixture = await buildRestFixture({ jobs: 300, companies: 40, seed: 9 })
  // A shared-cache lifetime set, so its documented headers are sent (off by default) and checked too.
  server = await startFixtureServer(fixture.distDir, { JOBSNAP_REST_LIMIT: 100_000, JOBSNAP_CDN_TTL: 3600 })
  base = server.url
  const res = await fetch(`${base}/openapi.yaml`)
  expect(res.status).toBe(200)
  expect(res.headers.get('content-type')).toMatch(/yaml/)
  doc = parseYaml(await res.text()) as JsonObject
  docUri = `${base}/openapi.yaml`
  // Formats (uuid, uri, date-time) are asserted, not just annotated.
  setShouldValidateFormat(true)
  registerSchema(doc as SchemaObject, docUri, OAS_31_DIALECT)
})

afterAll(async () => {
  await server?.close()
  await fixture?.cleanup()
})

// ------------------------------------------------------------------ helpers

const escapePointer = (segment: string) => segment.replace(/~/g, '~0').replace(/\//g, '~1')

function at(pointer: string): Json {
  let node: Json = doc
  for (const segment of pointer.split('/').slice(1)) {
    const key = segment.replace(/~1/g, '/').replace(/~0/g, '~')
    if (node === null || typeof node !== 'object') throw new Error(`${pointer}: not in the document`)
    node = Array.isArray(node) ? node[Number(key)]! : node[key]!
    if (node === undefined) throw new Error(`${pointer}: not in the document`)
  }
  return node
}

/** Follows a local `$ref` (one or more hops) and returns the pointer of the target. */
function deref(pointer: string): string {
  const node = at(pointer)
  if (node && typeof node === 'object' && !Array.isArray(node) && typeof node.$ref === 'string')
    return deref(node.$ref.replace(/^#/, ''))
  return pointer
}

/** The pointer of the documented response for an operation and status. */
function responsePointer(path: string, status: number): string {
  return deref(`/paths/${escapePointer(path)}/get/responses/${status}`)
}

function describeErrors(errors: OutputUnit[] | undefined): string {
  return (errors ?? [])
    .slice(0, 8)
    .map((e) => `${e.instanceLocation} fails ${e.absoluteKeywordLocation.replace(docUri, '')}`)
    .join('\n')
}

async function validateAt(schemaPointer: string, value: unknown): Promise<{ valid: boolean; message: string }> {
  // A JSON Pointer in a URI fragment is percent-encoded (RFC 6901 section 6): `{slug}` -> `%7Bslug%7D`.
  const fragment = schemaPointer.split('/').map(encodeURIComponent).join('/')
  const output = await validate(`${docUri}#${fragment}`, value as never, 'BASIC')
  return { valid: output.valid, message: output.valid ? '' : describeErrors(output.errors) }
}

/** The body and headers match what the document says about `path` answering `status`. */
async function expectConforms(path: string, res: JsonResponse<unknown>): Promise<void> {
  const pointer = responsePointer(path, res.status)
  const response = at(pointer) as JsonObject
  const content = response.content as JsonObject | undefined
  if (content) {
    const type = (res.headers.get('content-type') ?? '').split(';')[0]!.trim()
    expect(Object.keys(content), `${path} ${res.status}: documented media type`).toContain(type)
    const result = await validateAt(`${pointer}/content/${escapePointer(type)}/schema`, res.body)
    expect(result.valid, `${path} ${res.status} body:\n${result.message}`).toBe(true)
  } else {
    expect(res.text, `${path} ${res.status} has no documented body`).toBe('')
  }
  for (const name of Object.keys((response.headers as JsonObject | undefined) ?? {})) {
    const headerPointer = deref(`${pointer}/headers/${escapePointer(name)}`)
    const raw = res.headers.get(name)
    // Sent only when the request had parameters the endpoint does not take (v2-errors checks it is then).
    if (raw === null && name === 'X-Ignored-Parameters') continue
    expect(raw, `${path} ${res.status}: documented header ${name}`).not.toBeNull()
    const schema = at(`${headerPointer}/schema`) as JsonObject
    const value = schema.type === 'integer' ? Number(raw) : raw
    const result = await validateAt(`${headerPointer}/schema`, value)
    expect(result.valid, `${path} ${res.status}: header ${name}: ${raw}\n${result.message}`).toBe(true)
  }
}

// ---------------------------------------------------------------- the tests

describe('the served document', () => {
  it('is a valid OpenAPI 3.1 document, version 1.0.0', async () => {
    expect(String(doc.openapi)).toMatch(/^3\.1\.\d+$/)
    expect((doc.info as JsonObject).version).toBe('1.0.0')
    const output = await validate(OAS_31_DIALECT, doc as never, 'BASIC')
    expect(output.valid, output.valid ? '' : describeErrors(output.errors)).toBe(true)
  })

  it('lists /api/v1, /api/v2/jobs and /api/v2/jobs/{slug} with their responses', () => {
    const paths = doc.paths as JsonObject
    for (const path of ['/api/v1', '/api/v2/jobs', '/api/v2/jobs/{slug}']) expect(paths[path], path).toBeDefined()
    const statuses = (path: string) => Object.keys(at(`/paths/${escapePointer(path)}/get/responses`) as JsonObject)
    expect(statuses('/api/v1')).toEqual(expect.arrayContaining(['200', '429']))
    expect(statuses('/api/v2/jobs')).toEqual(expect.arrayContaining(['200', '400', '429']))
    expect(statuses('/api/v2/jobs/{slug}')).toEqual(expect.arrayContaining(['200', '404', '429']))
    const slugParam = (at('/paths/~1api~1v2~1jobs~1{slug}/get/parameters') as JsonObject[]).find(
      (p) => p.name === 'slug',
    )!
    expect(slugParam).toMatchObject({ in: 'path', required: true })
  })

  it('documents HEAD beside every GET: the same statuses and headers, no body', async () => {
    for (const path of ['/api/v1', '/api/v2/jobs', '/api/v2/jobs/{slug}']) {
      const get = at(`/paths/${escapePointer(path)}/get/responses`) as JsonObject
      const head = at(`/paths/${escapePointer(path)}/head/responses`) as JsonObject
      expect(Object.keys(head), path).toEqual(Object.keys(get))
      for (const response of Object.values(head)) expect(response as JsonObject, path).not.toHaveProperty('content')
    }
    const res = await fetch(`${base}/api/v2/jobs?limit=1`, { method: 'HEAD' })
    expect(res.status).toBe(200)
    expect(await res.text()).toBe('')
    expect(res.headers.get('etag')).not.toBeNull()
  })

  it("each error example is the server's own answer to the request its summary names", async () => {
    let checked = 0
    for (const name of ['BadRequest', 'UndecodablePath', 'NotFound']) {
      const examples = at(`/components/responses/${name}/content/application~1json/examples`) as Record<
        string,
        { summary: string; value: unknown }
      >
      for (const { summary, value } of Object.values(examples)) {
        const res = await request(`${base}${summary.replace(/^GET /, '')}`)
        expect(res.body, summary).toEqual(value)
        checked++
      }
    }
    expect(checked).toBe(4)
  })

  it('documents every v2 query parameter with its type, and page/limit for v1', () => {
    const params = (path: string) =>
      new Map((at(`/paths/${escapePointer(path)}/get/parameters`) as JsonObject[]).map((p) => [p.name as string, p]))
    const v2 = params('/api/v2/jobs')
    for (const name of V2_PARAMS) {
      expect(v2.get(name), name).toBeDefined()
      expect(v2.get(name)!.in).toBe('query')
      expect(String(v2.get(name)!.description ?? '').length, `${name} is described`).toBeGreaterThan(10)
    }
    const schemaOf = (name: string) => v2.get(name)!.schema as JsonObject
    for (const name of ['page', 'limit', 'salary_min', 'salary_max', 'posted_after'])
      expect(schemaOf(name).type, name).toBe('integer')
    expect(schemaOf('sort').enum).toEqual(['date', 'salary'])
    expect(schemaOf('q').maxLength).toBe(200)
    const v1 = params('/api/v1')
    // If-None-Match and If-Modified-Since are header parameters every GET documents.
    expect([...v1.keys()].sort()).toEqual(['If-Modified-Since', 'If-None-Match', 'limit', 'page'])
  })
})

describe('responses conform to the document', () => {
  it('v1 pages', async () => {
    for (const query of ['', '?limit=100&page=2', '?limit=7&page=3', '?page=999', '?limit=junk&sort=x']) {
      await expectConforms('/api/v1', await request(`${base}/api/v1${query}`))
    }
  })

  it('v2 list pages, every live job included, under various filters', async () => {
    const queries = [
      '',
      'limit=100&page=1',
      'limit=100&page=2',
      'limit=100&page=3',
      'category=engineering,data&sort=salary',
      'country=DE&work_arrangement=remote,hybrid',
      'salary_min=50000&salary_max=150000&sort=salary&limit=100',
      'posted_after=30&level=senior',
      'schedule=4_day_week&skills=python',
      'q=engineer&limit=50',
      'category=astronaut',
      'page=999',
      'facets=category,level,schedule,work_arrangement,skills,country,company&limit=3',
      'company=no-such-company&facets=schedule',
    ]
    let seen = 0
    for (const query of queries) {
      const res = await request<V2ListResponse>(`${base}/api/v2/jobs?${query}`)
      expect(res.status, query).toBe(200)
      await expectConforms('/api/v2/jobs', res)
      if (query.startsWith('limit=100&page=')) seen += res.body.data.length
    }
    expect(seen).toBe(fixture.oracle.live(NOW).length)
  })

  it('company lists and every company profile, 404 and 400 on companies', async () => {
    const slugs = new Set<string>()
    for (const query of ['', 'limit=100&sort=jobs', 'schedule=4_day_week&hires_worldwide=true', 'q=zzzz', 'page=99']) {
      const res = await request<{ data: { slug: string }[] }>(`${base}/api/v2/companies?${query}`)
      expect(res.status, query).toBe(200)
      await expectConforms('/api/v2/companies', res)
      for (const company of res.body.data) slugs.add(company.slug)
    }
    expect(slugs.size).toBeGreaterThan(10)
    for (const slug of slugs)
      await expectConforms('/api/v2/companies/{slug}', await request(`${base}/api/v2/companies/${slug}`))
    await expectConforms('/api/v2/companies/{slug}', await request(`${base}/api/v2/companies/no-such-company`))
    await expectConforms('/api/v2/companies', await request(`${base}/api/v2/companies?remote_level=moon`))
  })

  it('the change feed: 200, 400, 404 and 410', async () => {
    const live = (await request<unknown>(`${base}/api/v2/jobs?limit=1`)).headers.get('x-snapshot-id')!
    await expectConforms('/api/v2/changes', await request(`${base}/api/v2/changes?since=${live}`))
    await expectConforms('/api/v2/changes', await request(`${base}/api/v2/changes?since=junk`))
    await expectConforms('/api/v2/changes', await request(`${base}/api/v2/changes?since=29991231T235959999Z-0123abcd`))
    const gone = await request(`${base}/api/v2/changes?since=20200101T000000000Z-0123abcd`)
    expect(gone.status).toBe(410)
    await expectConforms('/api/v2/changes', gone)
  })

  it('the JSON feed, and a feed refusing a bad filter', async () => {
    await expectConforms('/feeds/jobs.json', await request(`${base}/feeds/jobs.json?category=engineering`))
    await expectConforms('/feeds/jobs.rss', await request(`${base}/feeds/jobs.rss?sort=salary&salary_min=-1`))
  })

  it('every single job', async () => {
    for (const job of fixture.oracle.live(NOW)) {
      const res = await request<V2Job>(`${base}/api/v2/jobs/${job.raw.slug}`)
      expect(res.status).toBe(200)
      await expectConforms('/api/v2/jobs/{slug}', res)
    }
  })

  it('304, 400, 404 and 405', async () => {
    const first = await request(`${base}/api/v2/jobs?level=lead`)
    await expectConforms(
      '/api/v2/jobs',
      await request(`${base}/api/v2/jobs?level=lead`, { headers: { 'if-none-match': first.headers.get('etag')! } }),
    )
    for (const query of [
      'sort=bogus',
      'page=x',
      'limit=1.5',
      'salary_min=-1',
      'salary_min=9&salary_max=1',
      'posted_after=z',
      'work_arrangement=moon',
      `q=${'q'.repeat(201)}`,
    ]) {
      const res = await request(`${base}/api/v2/jobs?${query}`)
      expect(res.status, query).toBe(400)
      await expectConforms('/api/v2/jobs', res)
    }
    const missing = await request(`${base}/api/v2/jobs/no-such-job`)
    expect(missing.status).toBe(404)
    await expectConforms('/api/v2/jobs/{slug}', missing)
    // Any method but GET, HEAD and OPTIONS: 405 with the error body (said in each OPTIONS operation).
    for (const path of ['/api/v1', '/api/v2/jobs']) {
      const res = await request(`${base}${path}`, { method: 'POST', body: '{}' })
      expect(res.status).toBe(405)
      const result = await validateAt('/components/schemas/ErrorResponse', res.body)
      expect(result.valid, result.message).toBe(true)
      expect(res.headers.get('allow')).not.toBeNull()
    }
  })

  it('429', async () => {
    const tight = await startFixtureServer(fixture.distDir, { JOBSNAP_REST_LIMIT: 1 })
    try {
      expect((await request(`${tight.url}/api/v1`)).status).toBe(200)
      for (const path of ['/api/v1', '/api/v2/jobs', '/api/v2/jobs/{slug}']) {
        const url = `${tight.url}${path.replace('{slug}', fixture.oracle.live(NOW)[0]!.raw.slug)}`
        const res = await request(url)
        expect(res.status).toBe(429)
        await expectConforms(path, res)
      }
    } finally {
      await tight.close()
    }
  })
})

describe('the validator really validates', () => {
  it('rejects bodies that break the documented schemas', async () => {
    const job = (await request<V2Job>(`${base}/api/v2/jobs/${fixture.oracle.live(NOW)[0]!.raw.slug}`)).body
    const jobPointer = `${responsePointer('/api/v2/jobs/{slug}', 200)}/content/application~1json/schema`
    expect((await validateAt(jobPointer, job)).valid).toBe(true)
    const broken: [string, unknown][] = [
      ['id not a UUID', { ...job, id: 'job-1' }],
      ['url not a URI', { ...job, url: 'not a uri' }],
      ['posted_at not a date-time', { ...job, posted_at: 'yesterday' }],
      ['salary_min not an integer', { ...job, salary_min: 1.5 }],
      ['work_arrangement outside the enum', { ...job, work_arrangement: 'space' }],
      ['an undocumented field', { ...job, apply_url: 'https://example.org' }],
      ['description as HTML-bearing field', { ...job, description_html: '<p>x</p>' }],
      ['a tag without slug', { ...job, skills: [{ name: 'Go' }] }],
      ['missing title', Object.fromEntries(Object.entries(job).filter(([k]) => k !== 'title'))],
    ]
    for (const [what, body] of broken) expect((await validateAt(jobPointer, body)).valid, what).toBe(false)
    const listPointer = `${responsePointer('/api/v2/jobs', 200)}/content/application~1json/schema`
    expect(
      (await validateAt(listPointer, { data: [job], page: 1, limit: 25, total: 1 })).valid,
      'list without has_more',
    ).toBe(false)
    const errorPointer = `${responsePointer('/api/v2/jobs', 400)}/content/application~1json/schema`
    expect((await validateAt(errorPointer, { error: { code: '400', message: 'x' } })).valid, 'code as a string').toBe(
      false,
    )
    expect((await validateAt(errorPointer, { message: 'x' })).valid, 'no error object').toBe(false)
  })
})
