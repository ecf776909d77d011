import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunningServer } from '../runtime/index.ts'
import { buildFixture, startFixtureServer, type FixtureSnapshot } from './support/fixtures.ts'

describe('smoke: build then serve', () => {
  let fixture: FixtureSnapshot
  let server: RunningServer
  beforeAll(async () => {
    fixture = await buildFixture({ jobs: 200, companies: 30 })
    server = await startFixtureServer(fixture.distDir)
  })
  afterAll(async () => {
    await server?.close()
    await fixture?.cleanup()
  })

  it('lists v2 jobs and serves the first one by slug', async () => {
    const list = await fetch(`${server.url}/api/v2/jobs?limit=5`)
    expect(list.status).toBe(200)
    const body = (await list.json()) as { data: { slug: string }[]; total: number }
    expect(body.total).toBe(fixture.build.manifest.counts.live_jobs)
    const one = await fetch(`${server.url}/api/v2/jobs/${body.data[0]!.slug}`)
    expect(one.status).toBe(200)
    expect(((await one.json()) as { slug: string }).slug).toBe(body.data[0]!.slug)
  })
})
