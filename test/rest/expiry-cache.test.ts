/**
 * docs/api.md: Live: a job whose expires_at passes between two
 * refreshes stops being listed at once, even from a v2 list that was cached a
 * moment before it expired, and the MCP tools stop counting it.
 */
import { lstat, readFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, expect, it } from 'vitest'
import type { RunningServer } from '../../runtime/index.ts'
import { FIXTURE_NOW, startFixtureServer } from '../support/fixtures.ts'
import { buildRestFixture, type RestFixture } from './support/fixture.ts'
import { getAllV2, getV2List } from './support/http.ts'
import type { OracleJob } from './support/oracle.ts'
import { callOk, connectMcp, type McpSession } from '../mcp/support/mcp.ts'

let fixture: RestFixture
let server: RunningServer
let mcp: McpSession
let now = FIXTURE_NOW.getTime()

beforeAll(async () => {
  fixture = await buildRestFixture({ jobs: 400, companies: 60, seed: 11 })
  server = await startFixtureServer(fixture.distDir, { JOBSNAP_REST_LIMIT: 100_000 }, () => now)
  mcp = await connectMcp(server.url)
})

afterAll(async () => {
  await mcp?.close()
  await server?.close()
  await fixture?.cleanup()
})

/** The live job of the fixture that expires first after the clock's `now`. */
function nextToExpire(): OracleJob {
  const next = fixture.oracle.jobs
    .filter((job) => fixture.oracle.isLive(job, now) && job.expiresMs !== undefined)
    .sort((a, b) => a.expiresMs! - b.expiresMs!)[0]
  expect(next, 'the fixture has a live job that expires later').toBeDefined()
  return next!
}

it('a cached list does not outlive a job in it', async () => {
  const expiring = nextToExpire()
  const query = new URLSearchParams({ limit: '100' })
  const before = await getAllV2(server.url, query)
  expect(before.jobs.some((job) => job.slug === expiring.raw.slug)).toBe(true)
  const first = await getV2List(server.url, 'limit=100')
  expect((await getV2List(server.url, 'limit=100')).headers.get('x-cache')).toBe('HIT')

  now = expiring.expiresMs! + 1
  const after = await getAllV2(server.url, query)
  expect(after.total).toBe(before.total - 1)
  expect(after.jobs.some((job) => job.slug === expiring.raw.slug)).toBe(false)
  expect((await getV2List(server.url, 'limit=100')).body.total).toBe(first.body.total - 1)
})

it('MCP market statistics stop counting a job once it expires', async () => {
  const next = nextToExpire()
  const before = await callOk<{ live_jobs: number }>(mcp, 'get_market_stats')
  expect(before.structured.live_jobs).toBe((await getV2List(server.url, 'limit=1')).body.total)

  now = next.expiresMs! + 1
  const after = await callOk<{ live_jobs: number }>(mcp, 'get_market_stats')
  expect(after.structured.live_jobs).toBe(before.structured.live_jobs - 1)
  expect(after.structured.live_jobs).toBe((await getV2List(server.url, 'limit=1')).body.total)
})

it('MCP employer profiles count only the jobs still live', async () => {
  const next = nextToExpire()
  const company = next.company
  const liveOf = (at: number) => fixture.oracle.live(at).filter((j) => j.raw.company_id === company.id).length
  const listed = async () => {
    const found = await callOk<{ companies: { slug: string; live_jobs: number }[] }>(mcp, 'search_companies', {
      query: company.name,
    })
    return found.structured.companies.find((c) => c.slug === company.slug)?.live_jobs
  }
  const before = await callOk<{ live_jobs: number }>(mcp, 'get_company', { slug: company.slug })
  expect(before.structured.live_jobs).toBe(liveOf(now))
  expect(await listed()).toBe(liveOf(now))

  now = next.expiresMs! + 1
  const after = await callOk<{ live_jobs: number }>(mcp, 'get_company', { slug: company.slug })
  expect(after.structured.live_jobs).toBe(before.structured.live_jobs - 1)
  expect(after.structured.live_jobs).toBe(liveOf(now))
  expect(await listed()).toBe(liveOf(now))
})

it('Last-Modified of a list moves to the expiry, so If-Modified-Since no longer gets 304; a single job keeps its own', async () => {
  // The snapshot's time: its build, or its publish (the `current` link) when later.
  const manifest = JSON.parse(await readFile(path.join(fixture.distDir, 'current', 'manifest.json'), 'utf8'))
  const published = Math.max(
    Date.parse(manifest.built_at),
    (await lstat(path.join(fixture.distDir, 'current'))).mtimeMs,
  )
  const httpDate = (ms: number) => new Date(Math.floor(ms / 1000) * 1000).toUTCString()
  // A job that expires after the publish (this test's clock starts before it).
  now = Math.max(now, published)
  const expiring = nextToExpire()
  const lastModified = async (path: string, headers: Record<string, string> = {}) => {
    const res = await fetch(`${server.url}${path}`, { headers })
    await res.arrayBuffer()
    return { status: res.status, lastModified: res.headers.get('last-modified') }
  }
  const listBefore = await lastModified('/api/v2/jobs?limit=5')
  expect(listBefore).toEqual({ status: 200, lastModified: expect.any(String) })
  expect(Date.parse(listBefore.lastModified!)).toBeLessThanOrEqual(Math.floor(now / 1000) * 1000)
  const held = { 'if-modified-since': listBefore.lastModified! }
  expect((await lastModified('/api/v2/jobs?limit=5', held)).status).toBe(304)
  expect((await lastModified('/feeds/jobs.rss', held)).status).toBe(304)

  now = expiring.expiresMs! + 1
  expect(await lastModified('/api/v2/jobs?limit=5', held)).toEqual({
    status: 200,
    lastModified: httpDate(expiring.expiresMs!),
  })
  expect((await lastModified('/feeds/jobs.rss', held)).status).toBe(200)
  expect((await lastModified('/api/v1', held)).status).toBe(200)
  // A live job's body is the snapshot's own: its Last-Modified stays the snapshot's time.
  const job = fixture.oracle.live(now)[0]!.raw.slug
  expect(await lastModified(`/api/v2/jobs/${job}`)).toEqual({ status: 200, lastModified: httpDate(published) })
  expect((await lastModified(`/api/v2/jobs/${job}`, { 'if-modified-since': httpDate(published) })).status).toBe(304)
})
