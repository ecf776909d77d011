/**
 * `jobsnap serve --workers 2` as real processes: the primary forks two
 * workers sharing one port; each client's REST and MCP limits are counted
 * once, whichever worker answers (held by the primary, no Redis); a hot swap
 * reaches both workers; a worker that dies is replaced; SIGTERM drains both
 * and the primary exits 0.
 *
 * Requests go over two keep-alive connections that are known to be served by
 * different workers (each /health names the process that answered it).
 */
import http from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { build, createDataset, retitleAll, type RefreshDataset } from './support/dataset.ts'
import { get, header, mcpPing, type HttpResult } from './support/http.ts'
import { eventually, killAll, ServerProcess } from './support/processes.ts'

let dataset: RefreshDataset
let server: ServerProcess
/** Two connections, each pinned to one worker: [agent, that worker's pid]. */
let pinned: [http.Agent, number][]
let nextClient = 1
/** Each test draws fresh client addresses (TEST-NET-2) through the trusted proxy header. */
const freshClient = () => `198.51.100.${nextClient++}`

async function healthOver(agent: http.Agent): Promise<{ pid: number; snapshot_id: string }> {
  const response = await get(`${server.url}/health`, { agent })
  expect(response.status).toBe(200)
  const health = JSON.parse(response.body.toString('utf8')) as {
    pid: number
    snapshot_id: string
    gc: { longest_pause_ms: number; collections: number }
  }
  // Each worker reports its own collector's pauses.
  expect(health.gc.collections).toBeGreaterThanOrEqual(0)
  expect(health.gc.longest_pause_ms).toBeGreaterThanOrEqual(0)
  return health
}

/** Opens keep-alive connections until two of them are served by different workers. */
async function connectionsToBothWorkers(): Promise<[http.Agent, number][]> {
  const byPid = new Map<number, http.Agent>()
  for (let attempt = 0; attempt < 40 && byPid.size < 2; attempt++) {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
    const { pid } = await healthOver(agent)
    if (byPid.has(pid)) agent.destroy()
    else byPid.set(pid, agent)
  }
  expect(byPid.size, 'two workers answer on one port').toBe(2)
  return [...byPid].map(([pid, agent]) => [agent, pid])
}

function restAs(client: string, worker: number, i: number): Promise<HttpResult> {
  const path = i % 2 === 0 ? '/api/v1' : '/api/v2/jobs?limit=5'
  return get(`${server.url}${path}`, { agent: pinned[worker % 2]![0], headers: { 'x-forwarded-for': client } })
}

beforeAll(async () => {
  dataset = await createDataset({ prefix: 'workers', jobs: 120, companies: 20 })
  await build(dataset)
  server = await ServerProcess.start({
    distDir: dataset.distDir,
    args: ['--workers', '2'],
    env: { JOBSNAP_TRUST_PROXY: '127.0.0.1', JOBSNAP_DRAIN_MS: '500' },
  })
  pinned = await connectionsToBothWorkers()
})

afterAll(async () => {
  for (const [agent] of pinned ?? []) agent.destroy()
  await killAll()
  await dataset?.cleanup()
})

describe('jobsnap serve --workers 2', () => {
  it('reports each worker ready with its RSS, then the total', async () => {
    const ready = server.logs.filter((line) => line.message === 'worker ready')
    expect(ready).toHaveLength(2)
    for (const line of ready) {
      expect(line.ready_ms).toBeGreaterThan(0)
      expect(line.rss_mb).toBeGreaterThan(0)
    }
    const listening = server.logs.find((line) => line.message.startsWith('jobsnap listening on'))!
    expect(listening).toMatchObject({ workers: 2, limits: 'held by the primary' })
    expect(listening.rss_mb_total).toBeGreaterThan((ready[0]!.rss_mb as number) + (ready[1]!.rss_mb as number))
  })

  it("counts a client's REST requests once across workers: the 61st is refused whichever worker gets it", async () => {
    const client = freshClient()
    // A preflight reads the primary's count from either worker and never adds to it.
    const preflight = async (worker: number) =>
      header(
        await get(`${server.url}/api/v1`, {
          method: 'OPTIONS',
          agent: pinned[worker]![0],
          headers: { 'x-forwarded-for': client, origin: 'https://example.org', 'access-control-request-method': 'GET' },
        }),
        'x-ratelimit-remaining',
      )
    for (let i = 0; i < 60; i++) {
      if (i === 30)
        for (const worker of [0, 1]) expect(await preflight(worker), `preflight to worker ${worker}`).toBe('30')
      const response = await restAs(client, i, i)
      expect(response.status, `request ${i + 1}, to worker ${pinned[i % 2]![1]}`).toBe(200)
      expect(header(response, 'x-ratelimit-remaining'), `request ${i + 1}: one count across both workers`).toBe(
        String(59 - i),
      )
    }
    for (const worker of [0, 1]) {
      const refused = await restAs(client, worker, 60 + worker)
      expect(refused.status, `request ${61 + worker}, to worker ${pinned[worker]![1]}`).toBe(429)
      expect(Number(header(refused, 'retry-after'))).toBeGreaterThanOrEqual(1)
      expect(await preflight(worker)).toBe('0')
    }
    // Another client is unaffected on either worker.
    expect((await restAs(freshClient(), 0, 0)).status).toBe(200)
    expect((await restAs(freshClient(), 1, 0)).status).toBe(200)
  })

  it("counts a client's MCP calls once across workers: the bucket of 60 empties whichever worker answers", async () => {
    const client = freshClient()
    let answered = 0
    for (let i = 0; i < 60; i++) {
      const response = await mcpPing(server.url, { agent: pinned[i % 2]![0], forwardedFor: client })
      if (response.status === 200) answered++
    }
    // The bucket refills 5 per second while the 60 calls run: refusals come within a few more.
    expect(answered).toBe(60)
    const statuses: number[] = []
    for (let i = 0; i < 20; i++)
      statuses.push((await mcpPing(server.url, { agent: pinned[i % 2]![0], forwardedFor: client })).status)
    const refused = statuses.filter((status) => status === 429).length
    expect(refused, `statuses after the burst: ${statuses.join(' ')}`).toBeGreaterThanOrEqual(10)
  })

  it('a published snapshot reaches both workers, one loading it after the other', async () => {
    const before = (await healthOver(pinned[0]![0])).snapshot_id
    const logsFrom = server.logs.length
    await retitleAll(dataset.dataDir, 2)
    const built = await build(dataset)
    expect(built.snapshotId).not.toBe(before)
    for (const [agent, pid] of pinned) {
      await eventually(
        async () => ((await healthOver(agent)).snapshot_id === built.snapshotId ? true : undefined),
        15_000,
        `worker ${pid} serves ${built.snapshotId}`,
      )
    }
    // Each worker logs its swap when done, with how long it loaded: the two loads must not overlap.
    const swaps = server.logs
      .slice(logsFrom)
      .filter((line) => line.message === 'snapshot loaded' && line.snapshot_id === built.snapshotId)
      .map((line) => {
        const end = Date.parse(line.time as string)
        return { worker: line.worker, start: end - (line.load_ms as number), end }
      })
      .sort((a, b) => a.start - b.start)
    expect(new Set(swaps.map((swap) => swap.worker))).toEqual(new Set(pinned.map(([, pid]) => pid)))
    const [first, second] = swaps as [(typeof swaps)[0], (typeof swaps)[0]]
    // Log times are whole milliseconds, load_ms rounded: 2 ms of slack.
    expect(second.start, 'the second worker starts loading once the first is done').toBeGreaterThanOrEqual(
      first.end - 2,
    )
  })

  it('replaces a worker that dies, and keeps answering meanwhile', async () => {
    const [, victim] = pinned[0]!
    process.kill(victim, 'SIGKILL')
    const from = server.logs.length
    await server.waitForLog(
      (line) => line.message === 'worker exited; starting another' && line.pid === victim,
      10_000,
      from,
    )
    await server.waitForLog((line) => line.message === 'worker ready', 30_000, from)
    for (const [agent] of pinned) agent.destroy()
    pinned = await connectionsToBothWorkers()
    expect(pinned.map(([, pid]) => pid)).not.toContain(victim)
  })

  it('answers one /metrics scrape for both workers, whichever worker gets it', async () => {
    const counted = (text: string) =>
      text
        .split('\n')
        .filter((line) => line.startsWith('jobsnap_http_requests_total{route="/api/v1",method="GET",status="200"}'))
        .reduce((sum, line) => sum + Number(line.split(' ').pop()), 0)
    const scrapeOver = async (agent: http.Agent) => {
      const response = await get(`${server.url}/metrics`, { agent })
      expect(response.status).toBe(200)
      return response.body.toString('utf8')
    }
    const before = counted(await scrapeOver(pinned[0]![0]))
    // Three v1 requests on each worker's connection.
    for (let i = 0; i < 6; i++) {
      const response = await get(`${server.url}/api/v1`, {
        agent: pinned[i % 2]![0],
        headers: { 'x-forwarded-for': freshClient() },
      })
      expect(response.status).toBe(200)
    }
    for (const [agent] of pinned) {
      const text = await scrapeOver(agent)
      expect(counted(text) - before, "both workers' requests in one scrape").toBe(6)
      // Each worker is ready: the gauge sums to the number of workers.
      expect(text).toMatch(/^jobsnap_ready 2$/m)
    }
  })

  it('SIGTERM drains both workers and the primary exits 0', async () => {
    const workers = pinned.map(([, pid]) => pid)
    for (const [agent] of pinned) agent.destroy()
    server.signal('SIGTERM')
    expect(await server.exited).toEqual({ code: 0, signal: null })
    for (const pid of workers) expect(() => process.kill(pid, 0), `worker ${pid} is gone`).toThrow()
  })
})
