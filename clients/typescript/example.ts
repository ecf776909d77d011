/**
 * A typed jobsnap client in a few lines: the types come from the server's own
 * /openapi.yaml, so a misspelt parameter, a wrong value type or a field the
 * API does not have is a compile error, not a surprise at run time.
 *
 *   npx openapi-typescript http://127.0.0.1:3000/openapi.yaml --output generated/jobsnap.d.ts
 *   npx tsx example.ts http://127.0.0.1:3000
 *
 * Prints one JSON line per call, which the test compares with plain HTTP.
 */
import createClient from 'openapi-fetch'
import type { paths } from './generated/jobsnap.js'

const client = createClient<paths>({ baseUrl: process.argv[2] ?? 'http://127.0.0.1:3000' })

// Lists take arrays (sent as repeated parameters); sort and limit are checked against the document.
const list = await client.GET('/api/v2/jobs', {
  params: { query: { work_arrangement: ['remote', 'hybrid'], sort: 'salary', limit: 5 } },
})
if (!list.data) throw new Error(`listing failed: ${list.response.status}`)
console.log(JSON.stringify({ call: 'list', total: list.data.total, slugs: list.data.data.map((job) => job.slug) }))

const slug = list.data.data[0]?.slug ?? 'none'
const one = await client.GET('/api/v2/jobs/{slug}', { params: { path: { slug } } })
console.log(
  JSON.stringify({ call: 'job', slug: one.data?.slug, title: one.data?.title, company: one.data?.company?.name }),
)

// Errors are typed too: error.field names the parameter the server refused.
const refused = await client.GET('/api/v2/jobs', { params: { query: { salary_min: -1 } } })
console.log(JSON.stringify({ call: 'refused', status: refused.response.status, field: refused.error?.error.field }))

const missing = await client.GET('/api/v2/companies/{slug}', { params: { path: { slug: 'no-such-company' } } })
console.log(JSON.stringify({ call: 'missing', status: missing.response.status, code: missing.error?.error.code }))

// What the types refuse (each line is a compile error; the test's type-check fails if one is not):
// @ts-expect-error sort is date or salary, not a number
client.GET('/api/v2/jobs', { params: { query: { sort: 1 } } })
// @ts-expect-error sort is date or salary: a misspelt value of a closed vocabulary does not compile
client.GET('/api/v2/jobs', { params: { query: { sort: 'salery' } } })
// @ts-expect-error work_arrangement takes onsite, hybrid and remote
client.GET('/api/v2/jobs', { params: { query: { work_arrangement: ['remot'] } } })
// @ts-expect-error remote_level is fully_remote, remote_friendly or onsite
client.GET('/api/v2/companies', { params: { query: { remote_level: ['sometimes'] } } })
// @ts-expect-error facets names filters (category, level, ...), not response fields
client.GET('/api/v2/jobs', { params: { query: { facets: ['salary'] } } })
// @ts-expect-error there is no such endpoint
client.GET('/api/v2/job')
// @ts-expect-error a job has no `salary` field (salary_min and salary_max)
list.data.data[0]?.salary
