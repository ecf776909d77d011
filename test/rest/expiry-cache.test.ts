/**
 * DECISIONS.md "What live means": a job whose expires_at passes between two
 * refreshes stops being listed at once, even from a v2 list that was cached a
 * moment before it expired, and the MCP tools stop counting it.
 */
import { afterAll, beforeAll, expect, it } from 'vitest'
import type { RunningServer } from '../../runtime/server.ts'
import { FIXTURE_NOW, startFixtureServer } from '../support/fixtures.ts'
import { buildRestFixture, type RestFixture } from './support/fixture.ts'
import { getAllV2, getV2List } from './support/http.ts'
import { callOk, connectMcp } from '../mcp/support/mcp.ts'

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

it('a cached list does not outlive a job in it', async () => {
  const expiring = fixture.oracle.jobs
    .filter((job) => job.raw.status === 'live' && job.raw.expires_at !== undefined && Date.parse(job.raw.expires_at) > now)
    .sort((a, b) => Date.parse(a.raw.expires_at!) - Date.parse(b.raw.expires_at!))[0]
  expect(expiring, 'the fixture has a live job that expires later').toBeDefined()
  const query = new URLSearchParams({ limit: '100' })
  const before = await getAllV2(server.url, query)
  expect(before.jobs.some((job) => job.slug === expiring!.raw.slug)).toBe(true)
  const first = await getV2List(server.url, 'limit=100')
  expect((await getV2List(server.url, 'limit=100')).headers.get('x-cache')).toBe('HIT')

  now = Date.parse(expiring!.raw.expires_at!) + 1
  const after = await getAllV2(server.url, query)
  expect(after.total).toBe(before.total - 1)
  expect(after.jobs.some((job) => job.slug === expiring!.raw.slug)).toBe(false)
  expect((await getV2List(server.url, 'limit=100')).body.total).toBe(first.body.total - 1)
})

it('MCP market statistics stop counting a job once it expires', async () => {
  const session = await connectMcp(server.url)
  try {
    const next = fixture.oracle.jobs
      .filter((job) => job.raw.status === 'live' && job.raw.expires_at !== undefined && Date.parse(job.raw.expires_at) > now)
      .sort((a, b) => Date.parse(a.raw.expires_at!) - Date.parse(b.raw.expires_at!))[0]
    expect(next, 'the fixture has another live job that expires later').toBeDefined()
    const before = await callOk<{ live_jobs: number }>(session, 'get_market_stats')
    expect(before.structured.live_jobs).toBe((await getV2List(server.url, 'limit=1')).body.total)

    now = Date.parse(next!.raw.expires_at!) + 1
    const after = await callOk<{ live_jobs: number }>(session, 'get_market_stats')
    expect(after.structured.live_jobs).toBe(before.structured.live_jobs - 1)
    expect(after.structured.live_jobs).toBe((await getV2List(server.url, 'limit=1')).body.total)
  } finally {
    await session.close()
  }
})

it('MCP employer profiles count only the jobs still live', async () => {
  const session = await connectMcp(server.url)
  try {
    const next = fixture.oracle.jobs
      .filter((job) => job.raw.status === 'live' && job.raw.expires_at !== undefined && Date.parse(job.raw.expires_at) > now)
      .sort((a, b) => Date.parse(a.raw.expires_at!) - Date.parse(b.raw.expires_at!))[0]
    expect(next, 'the fixture has another live job that expires later').toBeDefined()
    const company = next!.company
    const liveOf = (at: number) => fixture.oracle.jobs.filter((j) => j.raw.company_id === company.id && j.raw.status === 'live' && (j.expiresMs === undefined || j.expiresMs > at)).length
    const listed = async () => {
      const found = await callOk<{ companies: { slug: string; live_jobs: number }[] }>(session, 'search_companies', { query: company.name })
      return found.structured.companies.find((c) => c.slug === company.slug)?.live_jobs
    }
    const before = await callOk<{ live_jobs: number }>(session, 'get_company', { slug: company.slug })
    expect(before.structured.live_jobs).toBe(liveOf(now))
    expect(await listed()).toBe(liveOf(now))

    now = next!.expiresMs! + 1
    const after = await callOk<{ live_jobs: number }>(session, 'get_company', { slug: company.slug })
    expect(after.structured.live_jobs).toBe(before.structured.live_jobs - 1)
    expect(after.structured.live_jobs).toBe(liveOf(now))
    expect(await listed()).toBe(liveOf(now))
  } finally {
    await session.close()
  }
})
