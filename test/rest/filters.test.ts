/**
 * GET /api/v2/filters (docs/api.md: Filters): every filter value with its live
 * job count, checked against the brute-force oracle over the dataset files:
 * each listed count is what the oracle's list returns for that one value, and
 * the listed values are exactly those live jobs have.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { V2FiltersResponse } from '../../core/index.ts'
import type { RunningServer } from '../../runtime/index.ts'
import { FIXTURE_NOW, startFixtureServer } from '../support/fixtures.ts'
import { buildRestFixture, type RestFixture } from './support/fixture.ts'
import { countryCode, type FilterSpec } from './support/oracle.ts'

let fixture: RestFixture
let server: RunningServer
let filters: V2FiltersResponse
const now = FIXTURE_NOW.getTime()

beforeAll(async () => {
  fixture = await buildRestFixture({ jobs: 600, companies: 80, seed: 7 })
  server = await startFixtureServer(fixture.distDir, { JOBSNAP_REST_LIMIT: 100_000 })
  const response = await fetch(`${server.url}/api/v2/filters`)
  expect(response.status).toBe(200)
  filters = V2FiltersResponse.parse(await response.json())
})

afterAll(async () => {
  await server?.close()
  await fixture?.cleanup()
})

const oracleCount = (spec: FilterSpec) => fixture.oracle.query(spec, now).length
const valuesOf = (list: { value: string }[]) => list.map((entry) => entry.value).sort()

describe('GET /api/v2/filters', () => {
  it('counts every schedule type and work arrangement as the list filtered by it', () => {
    expect(filters.schedule).toHaveLength(7)
    for (const entry of filters.schedule) expect(entry.jobs, entry.value).toBe(oracleCount({ schedule: [entry.value] }))
    expect(valuesOf(filters.work_arrangement)).toEqual(['hybrid', 'onsite', 'remote'])
    for (const entry of filters.work_arrangement)
      expect(entry.jobs, entry.value).toBe(oracleCount({ work_arrangement: [entry.value] }))
  })

  it('lists exactly the categories, levels and skills live jobs have, each with the count the list returns', () => {
    const live = fixture.oracle.live(now)
    const expected = {
      category: [...new Set(live.flatMap((j) => (j.raw.category ? [j.raw.category] : [])))].sort(),
      level: [...new Set(live.flatMap((j) => (j.raw.level ? [j.raw.level] : [])))].sort(),
      skills: [...new Set(live.flatMap((j) => [...j.tags]))].sort(),
    }
    expect(valuesOf(filters.category)).toEqual(expected.category)
    expect(valuesOf(filters.level)).toEqual(expected.level)
    expect(valuesOf(filters.skills)).toEqual(expected.skills)
    for (const entry of filters.category) expect(entry.jobs, entry.value).toBe(oracleCount({ category: [entry.value] }))
    for (const entry of filters.level) expect(entry.jobs, entry.value).toBe(oracleCount({ level: [entry.value] }))
    for (const entry of filters.skills) expect(entry.jobs, entry.value).toBe(oracleCount({ skills: [entry.value] }))
    for (const list of [filters.category, filters.level, filters.skills, filters.country, filters.region])
      expect(list.map((e) => e.jobs)).toEqual([...list.map((e) => e.jobs)].sort((a, b) => b - a))
  })

  it('counts each country as the country filter does, remote work from its continent, a region or anywhere included', () => {
    const live = fixture.oracle.live(now)
    const named = new Set(
      live.flatMap((j) =>
        [...(j.raw.office_locations ?? []), ...(j.raw.remote_allowed ?? [])].flatMap((l) =>
          l.country ? [countryCode(l.country) ?? `unknown ${l.country}`] : [],
        ),
      ),
    )
    expect(filters.country.length).toBeGreaterThan(5)
    for (const entry of filters.country) {
      expect(named.has(entry.value), `${entry.value} is named by a live job`).toBe(true)
      expect(entry.jobs, entry.value).toBe(oracleCount({ country: entry.value }))
      expect(oracleCount({ country: entry.label }), `${entry.label} by name`).toBe(entry.jobs)
    }
    // Region names match case-insensitively (the dataset has a hand-written "emea"); counted under one spelling.
    const spelling = new Map(
      ['EMEA', 'Americas', 'APAC', 'LATAM', 'Worldwide'].map((name) => [name.toLowerCase(), name]),
    )
    const regions = new Map<string, number>()
    for (const job of live) {
      const named = (job.raw.remote_allowed ?? []).flatMap((l) =>
        l.region ? [spelling.get(l.region.toLowerCase())!] : [],
      )
      for (const region of new Set(named)) regions.set(region, (regions.get(region) ?? 0) + 1)
    }
    expect(Object.fromEntries(filters.region.map((e) => [e.value, e.jobs]))).toEqual(Object.fromEntries(regions))
  })

  it('counts each office country as office_country does: offices only, no remote work', () => {
    const live = fixture.oracle.live(now)
    const offices = new Set(
      live.flatMap((j) => (j.raw.office_locations ?? []).flatMap((l) => (l.country ? [countryCode(l.country)!] : []))),
    )
    expect(valuesOf(filters.office_country)).toEqual([...offices].sort())
    for (const entry of filters.office_country) {
      expect(entry.jobs, entry.value).toBe(oracleCount({ office_country: [entry.value] }))
      expect(oracleCount({ office_country: [entry.label!] }), `${entry.label} by name`).toBe(entry.jobs)
      const anyway = filters.country.find((c) => c.value === entry.value)!
      expect(entry.jobs, `${entry.value}: never more than country counts`).toBeLessThanOrEqual(anyway.jobs)
    }
    expect(filters.office_country.some((o) => o.jobs < filters.country.find((c) => c.value === o.value)!.jobs)).toBe(
      true,
    )
    const counts = filters.office_country.map((e) => e.jobs)
    expect(counts).toEqual([...counts].sort((a, b) => b - a))
  })

  it('is cached like any v2 answer: a strong ETag, 304 on If-None-Match, a HIT the second time', async () => {
    const first = await fetch(`${server.url}/api/v2/filters`)
    const etag = first.headers.get('etag')!
    expect(first.headers.get('x-cache')).toBe('HIT')
    expect(first.headers.get('x-snapshot-id')).toBe(filters.snapshot_id)
    expect(first.headers.get('x-ratelimit-remaining')).not.toBeNull()
    const again = await fetch(`${server.url}/api/v2/filters`, { headers: { 'if-none-match': etag } })
    expect(again.status).toBe(304)
  })
})
