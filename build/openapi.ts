/**
 * Generates `/openapi.yaml` (OpenAPI 3.1, document version 1.0.0) from the
 * zod schemas: response components from core/schema/api.ts, parameters from
 * core/query.ts. Nothing here restates a field; it only arranges them.
 */
import { stringify } from 'yaml'
import { z } from 'zod'
import { companyFiltersTag, parseV2CompanyQuery, V2_COMPANY_PARAMS } from '../core/company-query.ts'
import { encodeCursor } from '../core/cursor.ts'
import { continentName, countryContinent, resolveCountry } from '../core/geo.ts'
import { FEED_PARAMS, V1_LIST_PARAMS, V2_LIST_PARAMS } from '../core/query.ts'
import type { ParamSpec } from '../core/params.ts'
import { NO_FILTER, parseV2ListQuery, v2FiltersTag } from '../core/query.ts'
import '../core/schema/api.ts'
import type {
  ErrorBody,
  V1Job,
  V1ListResponse,
  V2CompanyListResponse,
  V2CompanyProfile,
  V2Job,
  V2ListResponse,
} from '../core/schema/api.ts'
import { SNAPSHOT_ID_PATTERN } from '../core/snapshot.ts'
import { DEFAULTS } from '../core/config.ts'
import { UNDECODABLE_PATH } from '../core/params.ts'
import { EXPORT_FILES } from '../core/exports.ts'

type JsonSchema = Record<string, unknown>

function withoutDialect(schema: JsonSchema): JsonSchema {
  const { $schema: _schema, $id: _id, ...rest } = schema
  return rest
}

/** Every schema registered with a `meta({ id })` becomes a component. */
function componentSchemas(): Record<string, JsonSchema> {
  const { schemas } = z.toJSONSchema(z.globalRegistry, {
    target: 'draft-2020-12',
    uri: (id) => `#/components/schemas/${id}`,
  })
  return Object.fromEntries(
    Object.entries(schemas).map(([id, schema]) => [id, withoutSafeIntegerBounds(withoutDialect(schema as JsonSchema))]),
  )
}

/**
 * zod writes every `z.int()` with the safe-integer range as its bounds. Those are
 * JavaScript's limits, not the contract's: dropped, so only real bounds show
 * (and Swagger UI stops inventing -9007199254740991 as an example).
 */
function withoutSafeIntegerBounds<T>(value: T): T {
  if (Array.isArray(value)) return value.map(withoutSafeIntegerBounds) as T
  if (typeof value !== 'object' || value === null) return value
  const out: Record<string, unknown> = {}
  for (const [key, inner] of Object.entries(value)) {
    if (key === 'minimum' && inner === Number.MIN_SAFE_INTEGER) continue
    if (key === 'maximum' && inner === Number.MAX_SAFE_INTEGER) continue
    out[key] = withoutSafeIntegerBounds(inner)
  }
  return out as T
}

const toSchema = (schema: z.ZodType, io: 'input' | 'output' = 'output') =>
  withoutSafeIntegerBounds(withoutDialect(z.toJSONSchema(schema, { target: 'draft-2020-12', io }) as JsonSchema))

/** Said of every closed vocabulary: the document names each value once, as generated clients type it. */
const ANY_CASE = ' The values are listed in lowercase; the server also takes them in any letter case.'

/**
 * The schema a query parameter is documented with. Lists are arrays sent as
 * a comma list (style form, explode false: `work_arrangement=remote,hybrid`;
 * the server also takes the parameter repeated); a closed vocabulary is an
 * `enum` of its values (items of a list, or the value), so a generated client
 * refuses a misspelt value at compile time; v1's lenient integers take any
 * string.
 */
function parameterSchema(spec: ParamSpec): JsonSchema {
  const schema = toSchema(spec.schema, 'input')
  if (spec.kind === 'list' || spec.kind === 'enumList') {
    const { examples, ...item } = schema
    // An example written as a comma list is one array of its values.
    return {
      type: 'array',
      items: item,
      ...(Array.isArray(examples) ? { examples: examples.map((e) => String(e).split(',')) } : {}),
    }
  }
  if (spec.kind === 'lenientInteger') {
    return {
      ...(schema.default === undefined ? {} : { default: schema.default }),
      anyOf: [
        { type: 'integer' },
        { type: 'string', description: 'Not an integer: the default is used.' },
        { type: 'array', items: { type: 'string' }, description: 'Given more than once: the first value counts.' },
      ],
    }
  }
  return schema
}

function queryParameters(params: Record<string, ParamSpec>) {
  return Object.entries(params).map(([name, spec]) => ({
    name,
    in: 'query',
    required: false,
    description: spec.kind === 'enum' || spec.kind === 'enumList' ? `${spec.description}${ANY_CASE}` : spec.description,
    schema: parameterSchema(spec),
    ...(spec.kind === 'list' || spec.kind === 'enumList' ? { style: 'form', explode: false } : {}),
    ...(spec.kind === 'lenientInteger' ? { style: 'form', explode: true } : {}),
  }))
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` })
const headerRef = (name: string) => ({ $ref: `#/components/headers/${name}` })

const HEADERS = {
  'X-API-Version': {
    description: 'API version that answered: v1 or v2.',
    schema: { type: 'string', enum: ['v1', 'v2'] },
  },
  'Cache-Control': {
    description: '`public, max-age=60` on success; `no-store` on errors.',
    schema: { type: 'string' },
  },
  'X-Cache': {
    description:
      'HIT: served without computing (precomputed file or cached response). MISS: computed now and cached for 60 s. BYPASS: never cached (errors, 429).',
    schema: { type: 'string', enum: ['HIT', 'MISS', 'BYPASS'] },
  },
  ETag: {
    description: 'Strong entity tag of this representation; send it back in If-None-Match to get 304.',
    schema: { type: 'string' },
  },
  Vary: { description: 'Accept-Encoding: gzip and brotli are offered.', schema: { type: 'string' } },
  'Last-Modified': {
    description:
      "When this representation last changed: a single job, the snapshot's publish (its build, or a rollback's republish when later); anything computed from the live jobs (lists, pages, counts, feeds, changes), that or the latest expiry of a job since, when later. Send it back in If-Modified-Since to get 304.",
    schema: { type: 'string' },
  },
  'X-RateLimit-Limit': {
    description: 'Requests allowed per rolling minute per client, v1 and v2 together.',
    schema: { type: 'integer' },
  },
  'X-RateLimit-Remaining': { description: 'Requests left in the current window.', schema: { type: 'integer' } },
  'X-RateLimit-Reset': {
    description: 'Whole seconds until the oldest counted request leaves the window.',
    schema: { type: 'integer' },
  },
  'RateLimit-Policy': { description: 'IETF RateLimit policy, e.g. `"rest";q=60;w=60`.', schema: { type: 'string' } },
  RateLimit: { description: 'IETF RateLimit fields, e.g. `"rest";r=59;t=60`.', schema: { type: 'string' } },
  'Retry-After': {
    description: 'Seconds to wait before retrying (integer, at least 1).',
    schema: { type: 'integer', minimum: 1 },
  },
  'X-Snapshot-Id': {
    description:
      'The snapshot that answered. Every answer to one request comes from one snapshot; after a refresh the id changes.',
    schema: { type: 'string' },
  },
  'Surrogate-Key': {
    description:
      "Cache tags for shared caches, space-separated (as Fastly reads them): `job:<slug>`, `company:<slug>`, `v1:<limit>:<page>`, `lists` (answers computed per query), `docs`, and `all` on every cacheable answer. A CDN purges by them after each publish; errors carry none. Which of Surrogate-Key, Cache-Tag and xkey are sent is the operator's choice.",
    schema: { type: 'string' },
  },
  'Cache-Tag': {
    description: 'The same cache tags, comma-separated (as Cloudflare reads them).',
    schema: { type: 'string' },
  },
  xkey: {
    description: "The same cache tags, space-separated (as Varnish's xkey module reads them).",
    schema: { type: 'string' },
  },
  'CDN-Cache-Control': {
    description:
      "Lifetime for shared caches (RFC 9213), when the operator sets one: `max-age=<s>, stale-while-revalidate=<s>, stale-if-error=<s>`. Browsers keep Cache-Control's 60 s.",
    schema: { type: 'string' },
  },
  'Surrogate-Control': {
    description: 'The same shared lifetime, for caches that read Surrogate-Control.',
    schema: { type: 'string' },
  },
  'X-Ignored-Parameters': {
    description:
      'The query parameters this endpoint does not take, comma-separated (percent-encoded), when there were any: a misspelt filter (locaton=DE) widens nothing silently.',
    schema: { type: 'string' },
  },
}

const rateLimitHeaders = {
  'X-RateLimit-Limit': headerRef('X-RateLimit-Limit'),
  'X-RateLimit-Remaining': headerRef('X-RateLimit-Remaining'),
  'X-RateLimit-Reset': headerRef('X-RateLimit-Reset'),
  'RateLimit-Policy': headerRef('RateLimit-Policy'),
  RateLimit: headerRef('RateLimit'),
}

/** Read by the caches in front, never needed by a client (see each header's description). */
const sharedCacheHeaders = {
  'Surrogate-Key': headerRef('Surrogate-Key'),
  'Cache-Tag': headerRef('Cache-Tag'),
  xkey: headerRef('xkey'),
  'CDN-Cache-Control': headerRef('CDN-Cache-Control'),
  'Surrogate-Control': headerRef('Surrogate-Control'),
}

function successHeaders(version: 'v1' | 'v2') {
  return {
    'X-API-Version': { ...headerRef('X-API-Version'), description: `Always ${version}.` },
    'Cache-Control': headerRef('Cache-Control'),
    'X-Cache': headerRef('X-Cache'),
    ETag: headerRef('ETag'),
    'Last-Modified': headerRef('Last-Modified'),
    Vary: headerRef('Vary'),
    'X-Snapshot-Id': headerRef('X-Snapshot-Id'),
    ...rateLimitHeaders,
    ...sharedCacheHeaders,
  }
}

const errorContent = { 'application/json': { schema: ref('ErrorResponse') } }
const errorHeaders = {
  'Cache-Control': headerRef('Cache-Control'),
  'X-Cache': headerRef('X-Cache'),
  ...rateLimitHeaders,
}

const RESPONSES = {
  NotModified: {
    description:
      'Not modified: the If-None-Match tag matches, or, without If-None-Match, the representation has not changed since the If-Modified-Since date.',
    headers: {
      ETag: headerRef('ETag'),
      'Last-Modified': headerRef('Last-Modified'),
      'Cache-Control': headerRef('Cache-Control'),
      'X-Cache': headerRef('X-Cache'),
      Vary: headerRef('Vary'),
      'X-Snapshot-Id': headerRef('X-Snapshot-Id'),
      ...rateLimitHeaders,
      ...sharedCacheHeaders,
    },
  },
  BadRequest: {
    description: 'Invalid query parameter; error.field names it and the message says what is allowed.',
    headers: errorHeaders,
    content: errorContent,
  },
  UndecodablePath: {
    description:
      'The path cannot be percent-decoded (a malformed escape such as %E0%A4%A); error.field is `slug` (or `path`).',
    headers: errorHeaders,
    content: errorContent,
  },
  NotFound: {
    description: 'Nothing live has this slug (a job, or a company with a live job).',
    headers: errorHeaders,
    content: errorContent,
  },
  TooManyRequests: {
    description: 'More than the allowed requests in a rolling minute from this client (v1 and v2 counted together).',
    headers: { 'Retry-After': headerRef('Retry-After'), ...errorHeaders },
    content: errorContent,
  },
}

const responseRef = (name: keyof typeof RESPONSES) => ({ $ref: `#/components/responses/${name}` })

const DESCRIPTION = `Every live job posting as JSON. Read-only, no authentication. v2 is recommended; v1 mirrors a legacy shape.

Behaviour the contract leaves open, as implemented:
- Absent or empty parameters do not filter; repeated list parameters join like commas. Unknown parameters are ignored, and v2 lists name them in X-Ignored-Parameters.
- A single-valued v2 parameter (page, limit, cursor, sort, salary_min, salary_max, posted_after, q) given twice with different values is a 400 naming it; v1 takes the first value.
- An integer too large to hold is still an integer: the clamps apply (limit 100, posted_after 365, a page past the end is empty), and a huge salary_min matches nothing.
- A trailing slash (/api/v1/, /api/v2/jobs/) is redirected (308) to the canonical path with the same query string.
- Comma lists match ANY value; different parameters combine with AND; matching is case-insensitive.
- page and limit are clamped (page >= 1, 1 <= limit <= 100); in v2 a non-integer is 400, in v1 it falls back to the default.
- Paging by page number is stable only while the set of live jobs does not change: a publish or an expiry between two pages shifts every later page. The v2 job and company lists also page by cursor: each page carries next_cursor (null on the last), and \`cursor=<next_cursor>\` continues right after the previous page's last item in the same sort order, across snapshots too, so nothing is skipped or repeated. A cursor is opaque; one this API did not make, or made for another sort or other filters, is a 400 naming cursor, as is cursor with page. On a page asked for by cursor, page is null and total counts every match. Programs that read a whole list (mirrors) should page by cursor.
- Salaries in responses are in the smallest currency unit; salary filters are whole USD per year (converted with the dataset's exchange-rate table; hour x weekly hours (40 when unknown) x 52, month x 12).
- Rate limit: 60 requests per rolling minute per client IP across v1 and v2; 429 carries Retry-After in seconds. /openapi.yaml is not limited.
- Responses are cached 60 s (Cache-Control: public, max-age=60) with a strong ETag and a Last-Modified; If-None-Match, or (without it) If-Modified-Since, gives 304. Errors carry Cache-Control: no-store.
- A job is live while it is not closed and its expires_at is absent or in the future.
- Companies (/api/v2/companies) are the employers with at least one live job; the jobs list takes \`company=<slug,...>\`.
- /feeds/jobs.rss, /feeds/jobs.atom and /feeds/jobs.json take the v2 filters and list the newest 50 matching jobs.
- \`/api/v2/changes?since=<snapshot id>\` lists the jobs added, updated and removed since that snapshot, for mirrors that sync by polling.
- /api/v2/exports lists each snapshot's bulk exports (jobs.ndjson.gz, companies.ndjson.gz, jobs.parquet): a mirror downloads jobs.ndjson.gz once, keeps its X-Snapshot-Id and then polls the changes. Paging through the list by page number can skip jobs when a snapshot is published mid-crawl; the export cannot.
- \`facets=<filter names>\` on the jobs list adds per-value counts, each facet counted with every other filter applied but not its own.
- An agent tool endpoint (Model Context Protocol, streamable HTTP) is served at /api/mcp.
- Please link back to the public website when you use the API in a public product.`

type Operation = {
  operationId: string
  summary: string
  responses: Record<string, Record<string, unknown>>
  [field: string]: unknown
}

/**
 * The HEAD twin of a GET operation: the same parameters, statuses and headers,
 * no body (a HEAD answer announces the Content-Length its GET would send).
 */
function headOf(get: Operation): Operation {
  const responses: Operation['responses'] = {}
  for (const [status, response] of Object.entries(get.responses)) {
    if (typeof response.$ref === 'string') {
      const name = response.$ref.split('/').at(-1) as keyof typeof RESPONSES
      const { content: _, ...rest } = RESPONSES[name] as Record<string, unknown>
      responses[status] = rest
    } else {
      const { content: _, ...rest } = response
      responses[status] = rest
    }
  }
  return { ...get, operationId: `${get.operationId}Head`, summary: `Headers only: ${get.summary}`, responses }
}

/** Sent back from a response's ETag: an unchanged representation is then a bodiless 304. */
const IF_NONE_MATCH = {
  name: 'If-None-Match',
  in: 'header',
  required: false,
  description:
    'The ETag of a copy you hold (or several, comma-separated, or *): when it still matches, the answer is 304 with no body.',
  schema: { type: 'string' },
}

/** The date of a copy, from its Last-Modified: for clients (feed readers) that keep no ETag. */
const IF_MODIFIED_SINCE = {
  name: 'If-Modified-Since',
  in: 'header',
  required: false,
  description:
    'The Last-Modified of a copy you hold: when nothing changed since, the answer is 304 with no body. Ignored when If-None-Match is sent, or when it is not a date.',
  schema: { type: 'string' },
}

/** The CORS preflight every path answers: not counted against the rate limit, no body. */
function preflightOf(get: Operation): Operation {
  const header = (description: string) => ({ description, schema: { type: 'string' } })
  const pathParameters = ((get.parameters as { in: string }[] | undefined) ?? []).filter((p) => p.in === 'path')
  // On a rate-limited path the preflight says where the client stands (without counting itself).
  const ok = (get.responses['200']?.headers ?? {}) as Record<string, unknown>
  const standing =
    'X-RateLimit-Limit' in ok
      ? { ...('X-API-Version' in ok ? { 'X-API-Version': ok['X-API-Version'] } : {}), ...rateLimitHeaders }
      : undefined
  return {
    operationId: `${get.operationId}Preflight`,
    tags: get.tags,
    ...(pathParameters.length > 0 ? { parameters: pathParameters } : {}),
    summary: 'CORS preflight',
    description: `Any origin may read this API. Methods other than GET, HEAD and OPTIONS are answered 405 with an Allow header and the error body, and count against the rate limit.${standing ? ' A preflight is not counted; its rate-limit headers say where the client stands (`X-RateLimit-Reset` is 0 when nothing is counted in the window).' : ''}`,
    responses: {
      '204': {
        description: 'Which methods and headers a cross-origin request may use.',
        headers: {
          'Access-Control-Allow-Origin': header('Always `*`.'),
          'Access-Control-Allow-Methods': header('`GET, HEAD, OPTIONS`.'),
          'Access-Control-Allow-Headers': header('`*`: any request header.'),
          'Access-Control-Max-Age': header('Seconds a browser may keep this answer: 86400.'),
          ...standing,
        },
      },
      ...(pathParameters.length > 0 ? { '400': responseRef('UndecodablePath') } : {}),
    },
  }
}

/**
 * Every GET path also answers HEAD (same headers, no body) and OPTIONS, and
 * every GET takes If-None-Match.
 */
function withHeadOperations(paths: Record<string, { get: Operation }>): Record<string, Record<string, Operation>> {
  return Object.fromEntries(
    Object.entries(paths).map(([path, item]) => {
      const get = {
        ...item.get,
        parameters: [...((item.get.parameters as unknown[]) ?? []), IF_NONE_MATCH, IF_MODIFIED_SINCE],
      }
      return [path, { get, head: headOf(get), options: preflightOf(get) }]
    }),
  )
}

const FEEDS = {
  rss: { name: 'RSS 2.0', mediaType: 'application/rss+xml', schema: { type: 'string' } },
  atom: { name: 'Atom 1.0', mediaType: 'application/atom+xml', schema: { type: 'string' } },
  json: {
    name: 'JSON Feed 1.1',
    mediaType: 'application/feed+json',
    schema: {
      type: 'object',
      description: 'A JSON Feed 1.1 document (https://www.jsonfeed.org/version/1.1/).',
      properties: {
        version: { type: 'string', const: 'https://jsonfeed.org/version/1.1', description: 'The format version.' },
        title: { type: 'string', description: 'What the filters select.' },
        items: { type: 'array', items: { type: 'object' }, description: 'The jobs, newest first (at most 50).' },
      },
      required: ['version', 'title', 'items'],
    },
  },
} as const

/** /feeds/jobs.rss, .atom and .json: one operation each, the v2 filters as parameters. */
function feedPaths(): Record<string, { get: Operation }> {
  return Object.fromEntries(
    Object.entries(FEEDS).map(([format, feed]) => [
      `/feeds/jobs.${format}`,
      {
        get: {
          operationId: `jobsFeed${format[0]!.toUpperCase()}${format.slice(1)}`,
          tags: ['feeds'],
          summary: `The newest 50 matching jobs as ${feed.name}`,
          description:
            "The v2 list filters select the jobs; the newest 50 are listed, newest first, each with the employer as its author (RSS: dc:creator, since RSS 2.0's author must be an e-mail address). page, limit, cursor, sort and facets do not apply (named in X-Ignored-Parameters). Cached, ETagged and rate limited like the v2 list; Last-Modified and If-Modified-Since as on every list.",
          parameters: queryParameters(FEED_PARAMS),
          responses: {
            '200': {
              description: `The feed (${feed.name}).`,
              headers: { ...successHeaders('v2'), 'X-Ignored-Parameters': headerRef('X-Ignored-Parameters') },
              content: { [feed.mediaType]: { schema: feed.schema } },
            },
            '304': responseRef('NotModified'),
            '400': responseRef('BadRequest'),
            '429': responseRef('TooManyRequests'),
          },
        },
      },
    ]),
  )
}

function buildOpenApiDocument(siteUrl: string): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: {
      title: 'jobsnap job listings API',
      version: '1.0.0',
      description: DESCRIPTION,
      // No SPDX identifier: every one names terms a user must meet, and the link back is only asked for.
      license: { name: 'Free to use; a link back to the public website is requested, not required', url: siteUrl },
      contact: { name: 'jobsnap', url: siteUrl },
    },
    // The public URL first: what a generated client takes as its base URL (a relative one fails outside a
    // browser). Then the origin that served the document, which /docs selects for try-it: its page may only
    // connect to its own origin, and on a staging or local server it must not try requests on the public one.
    servers: [
      { url: siteUrl.replace(/\/+$/, ''), description: 'The public API' },
      { url: '/', description: 'This server: the origin that served this document' },
    ],
    // No authentication anywhere: a public, read-only API. Said explicitly (an empty requirement list), so
    // clients and linters know the absence of security schemes is deliberate.
    security: [],
    tags: [
      { name: 'v2', description: 'Recommended: filters, sort, full text.' },
      { name: 'v1', description: 'Legacy shape; only page and limit are honoured.' },
      { name: 'feeds', description: 'RSS, Atom and JSON Feed of any v2 filter.' },
    ],
    paths: withHeadOperations({
      '/api/v1': {
        get: {
          operationId: 'listJobsV1',
          tags: ['v1'],
          summary: 'List live jobs (legacy shape)',
          description:
            'Newest first. Iterate page=1..N until has_more is false. Every parameter other than page and limit is ignored.',
          parameters: queryParameters(V1_LIST_PARAMS),
          responses: {
            '200': {
              description: 'A page of jobs.',
              headers: successHeaders('v1'),
              content: { 'application/json': { schema: ref('V1List') } },
            },
            '304': responseRef('NotModified'),
            '429': responseRef('TooManyRequests'),
          },
        },
      },
      '/api/v2/jobs': {
        get: {
          operationId: 'listJobs',
          tags: ['v2'],
          summary: 'List, filter and search live jobs',
          description:
            'Newest first (or by salary). Filters combine with AND; the values of one filter with OR. Iterate page=1..N while has_more is true, or (to read the whole list while it may change) follow next_cursor with cursor= until it is null. GET /api/v2/filters lists every value each filter understands, with its count.',
          parameters: queryParameters(V2_LIST_PARAMS),
          responses: {
            '200': {
              description: 'A page of matching jobs.',
              headers: { ...successHeaders('v2'), 'X-Ignored-Parameters': headerRef('X-Ignored-Parameters') },
              content: { 'application/json': { schema: ref('V2List') } },
            },
            '304': responseRef('NotModified'),
            '400': responseRef('BadRequest'),
            '429': responseRef('TooManyRequests'),
          },
        },
      },
      '/api/v2/jobs/{slug}': {
        get: {
          operationId: 'getJob',
          tags: ['v2'],
          summary: 'One live job by slug',
          description:
            'The job exactly as the list shows it. A job that has closed or expired is gone: 404, even if it was listed a minute ago.',
          parameters: [
            { name: 'slug', in: 'path', required: true, description: "The job's slug.", schema: { type: 'string' } },
          ],
          responses: {
            '200': {
              description: 'The job.',
              headers: successHeaders('v2'),
              content: { 'application/json': { schema: ref('V2Job') } },
            },
            '304': responseRef('NotModified'),
            '400': responseRef('UndecodablePath'),
            '404': responseRef('NotFound'),
            '429': responseRef('TooManyRequests'),
          },
        },
      },
      '/api/v2/changes': {
        get: {
          operationId: 'listChanges',
          tags: ['v2'],
          summary: 'The jobs added, updated and removed since a snapshot',
          description:
            'For mirrors: keep the X-Snapshot-Id of your last full read, poll this with `since=<that id>`, fetch the added and updated jobs and drop the removed ones, then keep `until`. Changes are between published snapshots (a job whose expires_at passes leaves in the next one). Republishing an older snapshot is followed too.',
          parameters: [
            {
              name: 'since',
              in: 'query',
              required: true,
              description:
                'A snapshot id, as X-Snapshot-Id names it (take it from any response; no example is given, as any fixed one would soon be pruned). Missing, malformed or given twice with different values: 400. No longer kept (pruned, or older than the oldest snapshot still linked): 410. Never built: 404.',
              // Its example (the snapshot published before this one) is set with the others, from the build.
              schema: { type: 'string', pattern: SNAPSHOT_ID_PATTERN.source },
            },
          ],
          responses: {
            '200': {
              description: 'The changes from `since` to the live snapshot.',
              headers: { ...successHeaders('v2'), 'X-Ignored-Parameters': headerRef('X-Ignored-Parameters') },
              content: { 'application/json': { schema: ref('V2Changes') } },
            },
            '304': responseRef('NotModified'),
            '400': responseRef('BadRequest'),
            '404': {
              description: 'No snapshot has this id.',
              headers: errorHeaders,
              content: errorContent,
            },
            '410': {
              description:
                'Changes since that snapshot are no longer kept: read the full list again. The message and X-Oldest-Snapshot-Id name the oldest id to sync from.',
              headers: {
                'X-Oldest-Snapshot-Id': {
                  description: 'The oldest snapshot id changes can be asked since.',
                  schema: { type: 'string' },
                },
                ...errorHeaders,
              },
              content: errorContent,
            },
            '429': responseRef('TooManyRequests'),
          },
        },
      },
      '/api/v2/exports': {
        get: {
          operationId: 'listExports',
          tags: ['v2'],
          summary: 'The bulk exports of the live snapshot',
          description:
            'Every live job and company in one download each, rebuilt with every snapshot: jobs.ndjson.gz (one job a line, each line byte for byte the /api/v2/jobs/{slug} body, newest first), companies.ndjson.gz (one /api/v2/companies/{slug} body a line, by name) and jobs.parquet (one row per job, flattened columns, sorted newest first, row groups with min/max statistics so readers fetch only the columns and dates they need). To mirror: download jobs.ndjson.gz, keep its X-Snapshot-Id, then poll `/api/v2/changes?since=<that id>`.',
          responses: {
            '200': {
              description: 'The files, with size, rows and SHA-256 each.',
              headers: successHeaders('v2'),
              content: { 'application/json': { schema: ref('V2Exports') } },
            },
            '304': responseRef('NotModified'),
            '429': responseRef('TooManyRequests'),
          },
        },
      },
      '/api/v2/exports/{name}': {
        get: {
          operationId: 'getExport',
          tags: ['v2'],
          summary: 'Download one bulk export file',
          description:
            'The stored file as it is: Content-Type application/gzip for .gz (no Content-Encoding, so the SHA-256 holds for the bytes downloaded), application/vnd.apache.parquet for .parquet. Strong ETag (the SHA-256 in quotes), Last-Modified (the build time), Accept-Ranges: bytes. One Range (bytes=a-b, a-, -n) gets 206; a range starting past the end gets 416 with `Content-Range: bytes */<size>`; several ranges get the whole file (200). If-Range with an ETag of another snapshot gets the whole new file (200): resume an interrupted download with Range plus If-Range. One download counts as one request against the rate limit.',
          parameters: [
            {
              name: 'name',
              in: 'path',
              required: true,
              description: 'The file name, as /api/v2/exports lists it.',
              schema: { type: 'string', enum: EXPORT_FILES.map((file) => file.name) },
            },
            {
              name: 'Range',
              in: 'header',
              required: false,
              description: 'One byte range, e.g. bytes=0-1023, bytes=1024- or bytes=-8.',
              schema: { type: 'string' },
            },
            {
              name: 'If-Range',
              in: 'header',
              required: false,
              description: 'The ETag of the partial copy: the range applies only if the file is still that one.',
              schema: { type: 'string' },
            },
          ],
          responses: {
            '200': {
              description: 'The whole file.',
              headers: {
                ...successHeaders('v2'),
                'Last-Modified': { description: 'The build time of the snapshot.', schema: { type: 'string' } },
                'Accept-Ranges': { description: 'Always bytes.', schema: { type: 'string' } },
              },
              content: {
                'application/gzip': { schema: { type: 'string', format: 'binary' } },
                'application/vnd.apache.parquet': { schema: { type: 'string', format: 'binary' } },
              },
            },
            '206': {
              description: 'The requested range.',
              headers: {
                ...successHeaders('v2'),
                'Content-Range': { description: '`bytes <first>-<last>/<size>`.', schema: { type: 'string' } },
              },
              content: {
                'application/gzip': { schema: { type: 'string', format: 'binary' } },
                'application/vnd.apache.parquet': { schema: { type: 'string', format: 'binary' } },
              },
            },
            '304': responseRef('NotModified'),
            '404': responseRef('NotFound'),
            '416': {
              description: 'The range starts past the end of the file.',
              headers: {
                'Content-Range': { description: '`bytes */<size>`.', schema: { type: 'string' } },
                ...errorHeaders,
              },
              content: errorContent,
            },
            '429': responseRef('TooManyRequests'),
          },
        },
      },
      '/api/v2/companies': {
        get: {
          operationId: 'listCompanies',
          tags: ['v2'],
          summary: 'List and filter employers with live jobs',
          description:
            'Employers with at least one live job now, by name (or most live jobs first with sort=jobs). Each carries its profile, its live job count and jobs_url, the jobs list filtered to it. Pages by page number or, to read the whole list while it may change, by following next_cursor with cursor= until it is null.',
          parameters: queryParameters(V2_COMPANY_PARAMS),
          responses: {
            '200': {
              description: 'A page of matching companies.',
              headers: { ...successHeaders('v2'), 'X-Ignored-Parameters': headerRef('X-Ignored-Parameters') },
              content: { 'application/json': { schema: ref('V2CompanyList') } },
            },
            '304': responseRef('NotModified'),
            '400': responseRef('BadRequest'),
            '429': responseRef('TooManyRequests'),
          },
        },
      },
      '/api/v2/companies/{slug}': {
        get: {
          operationId: 'getCompany',
          tags: ['v2'],
          summary: 'One employer with live jobs, by slug',
          description:
            'The full profile, with its live job count and jobs_url. An employer with no live job now is 404.',
          parameters: [
            {
              name: 'slug',
              in: 'path',
              required: true,
              description: "The company's slug (a job's company.slug).",
              schema: { type: 'string' },
            },
          ],
          responses: {
            '200': {
              description: 'The company profile.',
              headers: successHeaders('v2'),
              content: { 'application/json': { schema: ref('V2CompanyProfile') } },
            },
            '304': responseRef('NotModified'),
            '400': responseRef('UndecodablePath'),
            '404': responseRef('NotFound'),
            '429': responseRef('TooManyRequests'),
          },
        },
      },
      ...feedPaths(),
      '/api/v2/filters': {
        get: {
          operationId: 'listFilters',
          tags: ['v2'],
          summary: 'Every filter value with its live job count',
          description:
            'The values GET /api/v2/jobs understands for each filter, each with the total that list returns for that one value, so a client can offer only values that find something. Computed per snapshot and again once a job has expired since. Takes no parameters.',
          responses: {
            '200': {
              description: 'The vocabularies of this snapshot.',
              headers: successHeaders('v2'),
              content: { 'application/json': { schema: ref('V2Filters') } },
            },
            '304': responseRef('NotModified'),
            '429': responseRef('TooManyRequests'),
          },
        },
      },
    }),
    components: { schemas: componentSchemas(), headers: HEADERS, responses: RESPONSES },
  }
}

/** Real answers from the dataset being built: the document's examples, so readers and try-it see real data. */
export interface OpenApiExamples {
  /** The newest live job, as GET /api/v2/jobs/{slug} serves it. */
  v2Job: V2Job
  /** The same job in the v1 shape. */
  v1Job: V1Job
  /** Its employer's profile. */
  company: V2CompanyProfile
  /** v1's usage notice, as every v1 page carries it. */
  v1Usage: string
  liveJobs: number
  liveCompanies: number
}

type JsonObject = Record<string, unknown>

const mediaExample = (summary: string, value: unknown) => ({ summary, value })

/** Puts one example on a schema, operation response or parameter of `doc`, in place. */
function addExamples(doc: JsonObject, ex: OpenApiExamples): void {
  const { v2Job, v1Job, company } = ex
  const schemas = (doc.components as JsonObject).schemas as Record<string, JsonObject>
  const badLimit = parseV2ListQuery(new URLSearchParams('limit=ten'))
  const errorExample: ErrorBody = {
    error: { code: 400, ...(badLimit.ok ? { message: 'Invalid query parameter.' } : badLimit.error) },
  }
  // Real cursors: the ones the first page of the unfiltered lists carries.
  const jobCursor = encodeCursor({
    sort: 'date',
    filters: v2FiltersTag(NO_FILTER),
    postedAt: Date.parse(v2Job.posted_at),
    id: v2Job.id,
  })
  const companyQuery = parseV2CompanyQuery(new URLSearchParams())
  const companyCursor = companyQuery.ok
    ? encodeCursor({
        sort: 'name',
        filters: companyFiltersTag(companyQuery.value),
        name: company.name,
        slug: company.slug,
      })
    : null
  const v2List: V2ListResponse = {
    data: [v2Job],
    page: 1,
    limit: 1,
    total: ex.liveJobs,
    has_more: ex.liveJobs > 1,
    next_cursor: ex.liveJobs > 1 ? jobCursor : null,
  }
  const v1List: V1ListResponse = {
    usage: ex.v1Usage,
    page: 1,
    total: ex.liveJobs,
    has_more: ex.liveJobs > 1,
    jobs: [v1Job],
  }
  const companyList: V2CompanyListResponse = {
    data: [company],
    page: 1,
    limit: 1,
    total: ex.liveCompanies,
    has_more: ex.liveCompanies > 1,
    next_cursor: ex.liveCompanies > 1 ? companyCursor : null,
  }
  const tag = v2Job.skills?.[0] ?? v2Job.stack?.[0] ?? v2Job.tools?.[0]
  const place = v2Job.office_locations?.[0] ?? v2Job.remote_allowed?.[0]
  // The same job's facts in the other location shape: the first country it names (else its employer's).
  const legacyCountry =
    [...(v2Job.office_locations ?? []), ...(v2Job.remote_allowed ?? [])].find((p) => p.country !== undefined)
      ?.country ?? v2Job.company?.country
  const legacyCode = legacyCountry === undefined ? undefined : resolveCountry(legacyCountry)
  const bySchema: Record<string, unknown> = {
    V2Job: v2Job,
    V2Company: v2Job.company,
    V2Location: place,
    V2LegacyLocation: legacyCode && {
      country: legacyCountry,
      continent: continentName(countryContinent(legacyCode)),
      work_arrangement: v2Job.work_arrangement,
      is_primary: true,
    },
    V2Tag: tag,
    V2CompanyProfile: company,
    V1Job: v1Job,
    V1Company: v1Job.company,
    V1Tag: v1Job.filters[0],
    V1List: v1List,
    V2List: v2List,
    V2CompanyList: companyList,
    ErrorResponse: errorExample,
  }
  for (const [name, value] of Object.entries(bySchema))
    if (value !== undefined && schemas[name]) schemas[name].examples = [value]

  const byOperation: Record<string, { summary: string; value: unknown }> = {
    listJobsV1: mediaExample('GET /api/v1?limit=1', v1List),
    listJobs: mediaExample('GET /api/v2/jobs?limit=1', v2List),
    getJob: mediaExample(`GET /api/v2/jobs/${v2Job.slug}`, v2Job),
    listCompanies: mediaExample('GET /api/v2/companies?limit=1', companyList),
    getCompany: mediaExample(`GET /api/v2/companies/${company.slug}`, company),
  }
  const country = place?.country
  const byParameter: Record<string, Record<string, unknown>> = {
    listJobs: {
      category: v2Job.category,
      level: v2Job.level,
      schedule: v2Job.schedule_type,
      skills: tag?.slug,
      company: v2Job.company?.slug,
      country,
    },
    getJob: { slug: v2Job.slug },
    listCompanies: { country: company.country, schedule: company.schedule_type },
    getCompany: { slug: company.slug },
  }
  for (const item of Object.values(doc.paths as Record<string, Record<string, JsonObject>>)) {
    for (const operation of Object.values(item)) {
      const id = String(operation.operationId).replace(/Head$/, '')
      const example = byOperation[id]
      const ok = (operation.responses as Record<string, JsonObject>)['200']
      const json = (ok?.content as Record<string, JsonObject> | undefined)?.['application/json']
      if (example && json) json.examples = { newest: example }
      const values = byParameter[id] ?? (id.startsWith('jobsFeed') ? byParameter.listJobs : undefined)
      for (const parameter of (operation.parameters as JsonObject[] | undefined) ?? []) {
        const value = values?.[String(parameter.name)]
        if (typeof value === 'string') parameter.example = parameter.style === 'form' ? [value] : value
      }
    }
  }
  // Each error response its own examples: without, Swagger UI shows the schema's (a 400) under every status.
  const error = (code: number, message: string, field?: string): ErrorBody => ({
    error: { code, message, ...(field === undefined ? {} : { field }) },
  })
  const responses = (doc.components as { responses: Record<string, JsonObject> }).responses
  const setExamples = (response: JsonObject | undefined, examples: Record<string, unknown>) => {
    ;(response!.content as Record<string, JsonObject>)['application/json']!.examples = examples
  }
  setExamples(responses.BadRequest, { notAnInteger: mediaExample('GET /api/v2/jobs?limit=ten', errorExample) })
  setExamples(responses.UndecodablePath, {
    malformedEscape: mediaExample('GET /api/v2/jobs/%E0%A4%A', error(400, UNDECODABLE_PATH, 'slug')),
  })
  setExamples(responses.NotFound, {
    job: mediaExample(
      'GET /api/v2/jobs/no-such-job',
      error(404, 'No live job has the slug "no-such-job". List jobs at /api/v2/jobs.'),
    ),
    company: mediaExample(
      'GET /api/v2/companies/no-such-company',
      error(404, 'No company with a live job has the slug "no-such-company". List companies at /api/v2/companies.'),
    ),
  })
  const limit = DEFAULTS.JOBSNAP_REST_LIMIT
  setExamples(responses.TooManyRequests, {
    overLimit: mediaExample(
      `Request ${limit + 1} within a minute`,
      error(429, `Rate limit exceeded: ${limit} requests per minute per client across v1 and v2. Retry in 42 s.`),
    ),
  })
  const exportFile = (doc.paths as Record<string, { get: JsonObject }>)['/api/v2/exports/{name}']!.get
  setExamples((exportFile.responses as Record<string, JsonObject>)['416'], {
    pastTheEnd: mediaExample(
      'GET /api/v2/exports/jobs.parquet with Range: bytes=999999999999-',
      error(416, 'The range is outside the file: jobs.parquet has 1048576 bytes (offsets 0 to 1048575).', 'range'),
    ),
  })
  const changes = (doc.paths as Record<string, { get: JsonObject }>)['/api/v2/changes']!.get
  const changeResponses = changes.responses as Record<string, JsonObject>
  const unknownId = '20991231T235959999Z-00000000'
  setExamples(changeResponses['404'], {
    neverBuilt: mediaExample(
      `GET /api/v2/changes?since=${unknownId}`,
      error(404, `No snapshot has the id ${unknownId}. Snapshot ids come from the X-Snapshot-Id header.`, 'since'),
    ),
  })
  const prunedId = '20200101T000000000Z-00000000'
  const oldest = '20261124T182512983Z-140529c3'
  setExamples(changeResponses['410'], {
    noLongerKept: mediaExample(
      `GET /api/v2/changes?since=${prunedId}`,
      error(
        410,
        `Changes since ${prunedId} are no longer kept; the oldest snapshot to sync from is ${oldest}. Re-read the full list (/api/v2/jobs) and poll from its X-Snapshot-Id.`,
        'since',
      ),
    ),
  })
  // No example for `since`: the only ids that answer 200 are snapshots this server keeps, and one written here
  // would change the document with every publish (and so purge it from every cache, rewrite it on disk).
}

/**
 * The document, as YAML. With `examples` (the build passes the newest live
 * job and its employer), every response schema and operation shows real data;
 * without (an empty dataset), schemas only.
 */
export function buildOpenApiYaml(siteUrl: string, examples?: OpenApiExamples): string {
  // A plain tree: the document shares objects (headers, error content) that examples must not leak through,
  // and YAML anchors for them would trip readers that do not resolve aliases.
  const doc = JSON.parse(JSON.stringify(buildOpenApiDocument(siteUrl))) as JsonObject
  if (examples) addExamples(doc, examples)
  // Written for YAML 1.1 readers too (js-yaml in Swagger UI and most tools): a string such as a date-time or
  // `yes` is quoted, so it is not read back as a date or a boolean.
  return stringify(doc, { lineWidth: 0, aliasDuplicateObjects: false, version: '1.1' })
}
