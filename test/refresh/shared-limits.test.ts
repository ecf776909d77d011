/**
 * Replicas (docs/operating.md): two `jobsnap serve` processes sharing
 * one real redis-server count each client once (REST sliding log, MCP token
 * bucket); with Redis gone they keep answering on per-replica limits, and
 * share again once it is back.
 */
import http from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { build, createDataset, readJobIndex, type RefreshDataset } from './support/dataset.ts'
import { get, header, mcpPing, runLoad, type HttpResult, type LoadTarget } from './support/http.ts'
import { killAll, RedisProcess, ServerProcess, sleep } from './support/processes.ts'

let dataset: RefreshDataset
let redis: RedisProcess
let servers: [ServerProcess, ServerProcess]
let slugs: string[]
/** Each test draws fresh client addresses (TEST-NET-2), never reused. */
let nextClient = 1
const freshClient = () => `198.51.100.${nextClient++}`

beforeAll(async () => {
  redis = await RedisProcess.start()
  dataset = await createDataset({ prefix: 'replicas', jobs: 120, companies: 20 })
  const built = await build(dataset)
  slugs = (await readJobIndex(dataset.distDir, built.snapshotId)).jobs.slice(0, 10).map((j) => j.slug)
  const env = { JOBSNAP_REDIS_URL: redis.url, JOBSNAP_TRUST_PROXY: '127.0.0.1' }
  servers = await Promise.all([
    ServerProcess.start({ distDir: dataset.distDir, env }),
    ServerProcess.start({ distDir: dataset.distDir, env }),
  ])
})

/** While Redis runs, no server may have fallen back to its own counts (that would let clients past the shared limit). */
function expectNoFallback(): void {
  for (const server of servers)
    expect(
      server.logs.filter((l) => l.message.startsWith('redis unavailable')),
      'fell back with Redis up',
    ).toEqual([])
}

afterAll(async () => {
  await killAll()
  await dataset?.cleanup()
})

/** A REST request as `client` (through a trusted proxy: X-Forwarded-For) to server `n`. */
function restAs(client: string, n: number, i: number): Promise<HttpResult> {
  const path =
    i % 3 === 0 ? '/api/v1' : i % 3 === 1 ? `/api/v2/jobs/${slugs[i % slugs.length]}` : '/api/v2/jobs?limit=5'
  return get(`${servers[n % 2]!.url}${path}`, { headers: { 'x-forwarded-for': client } })
}

/** A CORS preflight as `client` to server `n`: not counted, but showing the client's standing. */
async function preflightRemaining(client: string, n: number): Promise<string | undefined> {
  const response = await get(`${servers[n % 2]!.url}/api/v2/jobs`, {
    method: 'OPTIONS',
    headers: { 'x-forwarded-for': client, origin: 'https://example.org', 'access-control-request-method': 'GET' },
  })
  expect(response.status).toBe(204)
  return header(response, 'x-ratelimit-remaining')
}

/** 61 requests alternating between the servers: 60 answered, with one count shared by both; the 61st refused. */
async function expectSharedRestLimit(client: string): Promise<void> {
  for (let i = 0; i < 60; i++) {
    // Preflights read the shared count from either server and never add to it.
    if (i === 30)
      for (const n of [0, 1]) expect(await preflightRemaining(client, n), `preflight to server ${n}`).toBe('30')
    const response = await restAs(client, i, i)
    expect(response.status, `request ${i + 1} of ${client}, to server ${i % 2}`).toBe(200)
    expect(header(response, 'x-ratelimit-remaining'), `request ${i + 1}: one count across both servers`).toBe(
      String(59 - i),
    )
  }
  for (const n of [0, 1]) {
    const refused = await restAs(client, n, 60 + n)
    expect(refused.status, `request ${61 + n} of ${client}, to server ${n}`).toBe(429)
    expect(Number(header(refused, 'retry-after'))).toBeGreaterThanOrEqual(1)
    expect(header(refused, 'x-ratelimit-remaining')).toBe('0')
    expect(await preflightRemaining(client, n)).toBe('0')
  }
}

describe('two servers sharing one Redis', () => {
  it('refuse a client its 61st REST request in the minute, whichever server it asks; another client is served', async () => {
    await expectSharedRestLimit(freshClient())
    const other = freshClient()
    for (const n of [0, 1]) {
      const response = await restAs(other, n, n)
      expect(response.status).toBe(200)
      expect(header(response, 'x-ratelimit-remaining')).toBe(String(59 - n))
    }
    expectNoFallback()
  })

  it('share the MCP bucket (burst 60, refilled 5 per second)', async () => {
    const client = freshClient()
    const agents = [
      new http.Agent({ keepAlive: true, maxSockets: 20 }),
      new http.Agent({ keepAlive: true, maxSockets: 20 }),
    ]
    try {
      // 90 pings at once, 45 to each server: each replica alone would let all of its 45 through.
      const started = performance.now()
      const responses = await Promise.all(
        Array.from({ length: 90 }, (_, i) =>
          mcpPing(servers[i % 2]!.url, { agent: agents[i % 2], forwardedFor: client }),
        ),
      )
      const seconds = (performance.now() - started) / 1000
      const statuses = responses.map((r) => r.status)
      expect(
        statuses.filter((s) => s !== 200 && s !== 429),
        'only 200 and 429',
      ).toEqual([])
      const allowed = statuses.filter((s) => s === 200).length
      expect(allowed).toBeGreaterThanOrEqual(60)
      expect(allowed, `allowed within ${seconds.toFixed(2)} s`).toBeLessThanOrEqual(60 + Math.ceil(5 * seconds) + 1)
      const refused = responses.find((r) => r.status === 429)
      expect(refused, `some of the 90 refused (took ${seconds.toFixed(2)} s)`).toBeDefined()
      expect(Number(header(refused!, 'retry-after'))).toBeGreaterThanOrEqual(1)
      // Another client has its own bucket.
      for (const server of servers)
        expect((await mcpPing(server.url, { forwardedFor: freshClient() })).status).toBe(200)
      // A burst stalls each server's event loop for a moment; that alone must not count as Redis being away.
      expectNoFallback()
    } finally {
      for (const agent of agents) agent.destroy()
    }
  })

  it('keep answering while Redis is down (per-replica limits, logged), and share limits again once it is back', {
    timeout: 90_000,
  }, async () => {
    const logsFrom = servers.map((s) => s.logs.length)
    // Steady load on both servers; every client address is used a few times only, so no limit is reached.
    let stop = false
    const load = runLoad({
      concurrency: 8,
      next: (n): LoadTarget & { target: number } => {
        // 10 requests per address (8 REST, 2 MCP, over both servers), never reused: no limit is ever reached.
        const address = Math.floor(n / 10)
        const client = `100.${64 + (Math.floor(address / 65_536) % 64)}.${Math.floor(address / 256) % 256}.${address % 256}`
        const server = servers[n % 2]!
        if (n % 5 === 4) {
          return {
            target: 1,
            url: `${server.url}/api/mcp`,
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              accept: 'application/json, text/event-stream',
              'mcp-protocol-version': '2025-11-25',
              'x-forwarded-for': client,
            },
            body: JSON.stringify({ jsonrpc: '2.0', id: n, method: 'ping' }),
          }
        }
        return {
          target: 0,
          url: `${server.url}/api/v2/jobs/${slugs[n % slugs.length]}`,
          headers: { 'x-forwarded-for': client },
        }
      },
      stop: () => stop,
      maxDurationMs: 30_000,
    })
    let run: Awaited<typeof load>
    try {
      await sleep(700)
      await redis.stop()
      await Promise.all(
        servers.map((s, i) => s.waitForLog((l) => l.message.startsWith('redis unavailable'), 10_000, logsFrom[i])),
      )
      await sleep(1500)
    } finally {
      stop = true
      run = await load
    }
    expect(run.samples.length).toBeGreaterThan(100)
    const failed = run.samples.filter((s) => s.error !== undefined || s.status !== 200)
    expect(
      failed.slice(0, 5).map((s) => ({ status: s.status, error: s.error })),
      `${failed.length} of ${run.samples.length} failed`,
    ).toEqual([])

    // Logged once per outage, not per request.
    for (const [i, server] of servers.entries()) {
      expect(server.logs.slice(logsFrom[i]).filter((l) => l.message.startsWith('redis unavailable'))).toHaveLength(1)
    }

    // What an operator's dashboard sees meanwhile.
    const redisGauge = async (server: ServerProcess) =>
      /^jobsnap_redis_connected (\d)$/m.exec((await get(`${server.url}/metrics`)).body.toString('utf8'))?.[1]
    expect(await redisGauge(servers[0]!)).toBe('0')

    // While Redis is away each replica counts alone: a client alternating between them gets past 60.
    const alone = freshClient()
    for (let i = 0; i < 62; i++)
      expect((await restAs(alone, i, i)).status, `request ${i + 1} while Redis is down`).toBe(200)

    // Redis back on the same port: the servers reconnect and count together again.
    const backFrom = servers.map((s) => s.logs.length)
    await redis.restart()
    await Promise.all(
      servers.map((s, i) => s.waitForLog((l) => l.message.startsWith('redis is back'), 15_000, backFrom[i])),
    )
    expect(await redisGauge(servers[1]!)).toBe('1')
    await expectSharedRestLimit(freshClient())
  })
})
