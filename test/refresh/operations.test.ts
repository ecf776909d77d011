/**
 * What an operator runs the API with (docs/operating.md), against real
 * `jobsnap serve` processes: /metrics in the Prometheus text format, only
 * for allowed peers; one JSON access line per request with its X-Request-Id;
 * /ready answering 503 while the first snapshot loads and while draining
 * after SIGTERM, when everything else is still served.
 */
import http from 'node:http'
import { serve } from 'h3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../core/index.ts'
import { createApp, createFileCache, SnapshotHolder } from '../../runtime/index.ts'
import { build, createDataset, retitleAll, type RefreshDataset } from './support/dataset.ts'
import { get, header, mcpPing } from './support/http.ts'
import { killAll, ServerProcess, sleep } from './support/processes.ts'

let dataset: RefreshDataset
let snapshotId: string

beforeAll(async () => {
  dataset = await createDataset({ prefix: 'operations', jobs: 120, companies: 20 })
  snapshotId = (await build(dataset)).snapshotId
})

afterAll(async () => {
  await killAll()
  await dataset?.cleanup()
})

/** The value of one sample (`name{labels} value`) in a Prometheus text exposition, or undefined. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (!match || match[1] !== name) continue
    const found = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]))
    if (Object.entries(labels).every(([key, value]) => found[key] === value)) return Number(match[3])
  }
  return undefined
}

async function scrape(url: string): Promise<string> {
  const response = await get(`${url}/metrics`)
  expect(response.status).toBe(200)
  expect(header(response, 'content-type')).toMatch(/^text\/plain; version=0\.0\.4/)
  expect(header(response, 'cache-control')).toBe('no-store')
  return response.body.toString('utf8')
}

/** A GET whose connection leaves from `localAddress` (any 127.x address is this machine). */
function getFrom(localAddress: string, url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { localAddress, agent: false }, (response) => {
        let body = ''
        response.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')))
        response.once('end', () => resolve({ status: response.statusCode ?? 0, body }))
      })
      .once('error', reject)
  })
}

describe('/metrics', () => {
  it('counts requests by route and status, cache results, refusals and snapshot loads', async () => {
    const server = await ServerProcess.start({
      distDir: dataset.distDir,
      env: { JOBSNAP_REST_LIMIT: '5', JOBSNAP_MCP_BURST: '2', JOBSNAP_MCP_RATE: '0.01' },
    })
    try {
      const before = await scrape(server.url)
      expect(sample(before, 'jobsnap_snapshot_info', { snapshot_id: snapshotId })).toBe(1)
      expect(sample(before, 'jobsnap_snapshot_loads_total', { result: 'ok' })).toBe(1)
      expect(sample(before, 'jobsnap_live_jobs')).toBeGreaterThan(0)
      expect(sample(before, 'jobsnap_ready')).toBe(1)
      expect(sample(before, 'jobsnap_rate_limited_total', { limit: 'rest' })).toBe(0)
      // prom-client's process metrics: event-loop lag and GC are there for dashboards.
      expect(sample(before, 'nodejs_eventloop_lag_seconds')).toBeGreaterThanOrEqual(0)
      expect(before).toContain('# TYPE nodejs_gc_duration_seconds histogram')

      // 2 precomputed v1 pages (HIT), a computed list twice (MISS, then HIT), a 404, then refusals.
      const statuses: number[] = []
      for (const path of [
        '/api/v1',
        '/api/v1?page=2',
        '/api/v2/jobs?limit=3',
        '/api/v2/jobs?limit=3',
        '/api/v2/jobs/nope',
      ])
        statuses.push((await get(`${server.url}${path}`)).status)
      expect(statuses).toEqual([200, 200, 200, 200, 404])
      expect((await get(`${server.url}/api/v1`)).status).toBe(429)
      for (let i = 0; i < 3; i++) await mcpPing(server.url)

      const after = await scrape(server.url)
      const requests = (route: string, status: string) =>
        sample(after, 'jobsnap_http_requests_total', { route, method: 'GET', status })
      expect(requests('/api/v1', '200')).toBe(2)
      expect(requests('/api/v1', '429')).toBe(1)
      expect(requests('/api/v2/jobs', '200')).toBe(2)
      expect(requests('/api/v2/jobs/{slug}', '404')).toBe(1)
      expect(requests('/metrics', '200')).toBe(1)
      expect(sample(after, 'jobsnap_http_request_duration_seconds_count', { route: '/api/v1' })).toBe(3)
      expect(sample(after, 'jobsnap_response_cache_total', { result: 'HIT' })).toBe(3)
      expect(sample(after, 'jobsnap_response_cache_total', { result: 'MISS' })).toBe(1)
      expect(sample(after, 'jobsnap_rate_limited_total', { limit: 'rest' })).toBe(1)
      expect(sample(after, 'jobsnap_rate_limited_total', { limit: 'mcp' })).toBe(1)
      // The computed v2 list is held in the response cache, and the gauge says how much it holds.
      expect(sample(after, 'jobsnap_cache_bytes', { cache: 'responses' })).toBeGreaterThan(0)
      expect(sample(after, 'jobsnap_cache_bytes', { cache: 'files' })).toBeGreaterThanOrEqual(0)

      // A new snapshot counts as a load, and the info gauge names it.
      await retitleAll(dataset.dataDir, 1)
      const next = await build(dataset)
      await server.waitForLog(
        (line) => line.message === 'snapshot loaded' && line.snapshot_id === next.snapshotId,
        10_000,
      )
      const swapped = await scrape(server.url)
      expect(sample(swapped, 'jobsnap_snapshot_loads_total', { result: 'ok' })).toBe(2)
      expect(sample(swapped, 'jobsnap_snapshot_info', { snapshot_id: next.snapshotId })).toBe(1)
      expect(sample(swapped, 'jobsnap_snapshot_info', { snapshot_id: snapshotId })).toBeUndefined()
      snapshotId = next.snapshotId

      // Not rate limited: the REST bucket is long empty, and scrapes still answer.
      for (let i = 0; i < 3; i++) await scrape(server.url)
    } finally {
      await server.stop()
    }
  })

  it('answers only peers in JOBSNAP_METRICS_ALLOW (the TCP peer; X-Forwarded-For is not believed)', async () => {
    const server = await ServerProcess.start({
      distDir: dataset.distDir,
      env: { JOBSNAP_METRICS_ALLOW: '127.0.0.1', JOBSNAP_TRUST_PROXY: '127.0.0.0/8' },
    })
    try {
      expect((await getFrom('127.0.0.1', `${server.url}/metrics`)).status).toBe(200)
      const refused = await getFrom('127.0.0.2', `${server.url}/metrics`)
      expect(refused.status).toBe(403)
      expect(JSON.parse(refused.body)).toEqual({
        error: { code: 403, message: 'Metrics are served only to the addresses in JOBSNAP_METRICS_ALLOW.' },
      })
      // A request a proxy forwards for someone else is refused even from an allowed peer (a front on loopback),
      // whatever address it names; and a forwarded address that is allowed does not open it for a peer that is not.
      const forwarded = await get(`${server.url}/metrics`, { headers: { 'x-forwarded-for': '127.0.0.1' } })
      expect(forwarded.status).toBe(403)
      const spoofed = await new Promise<number>((resolve, reject) =>
        http
          .get(
            `${server.url}/metrics`,
            { localAddress: '127.0.0.2', agent: false, headers: { 'x-forwarded-for': '127.0.0.1' } },
            (response) => {
              response.resume()
              resolve(response.statusCode ?? 0)
            },
          )
          .once('error', reject),
      )
      expect(spoofed).toBe(403)
    } finally {
      await server.stop()
    }
  })

  it('is absent with JOBSNAP_METRICS=false', async () => {
    const server = await ServerProcess.start({ distDir: dataset.distDir, env: { JOBSNAP_METRICS: 'false' } })
    try {
      expect((await get(`${server.url}/metrics`)).status).toBe(404)
    } finally {
      await server.stop()
    }
  })
})

describe('access log and X-Request-Id', () => {
  it('writes one JSON line per request and echoes a sane X-Request-Id or makes one', async () => {
    const server = await ServerProcess.start({ distDir: dataset.distDir, env: { JOBSNAP_TRUST_PROXY: '127.0.0.1' } })
    try {
      const echoed = await get(`${server.url}/api/v1?page=2`, {
        headers: { 'x-request-id': 'edge-7f3a.42', 'x-forwarded-for': '203.0.113.9' },
      })
      expect(echoed.status).toBe(200)
      expect(header(echoed, 'x-request-id')).toBe('edge-7f3a.42')
      const made = await get(`${server.url}/api/v2/jobs?limit=2`)
      const madeId = header(made, 'x-request-id')!
      expect(madeId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
      // A header that could forge log lines is replaced, not echoed.
      const junk = await get(`${server.url}/health`, { headers: { 'x-request-id': 'a b"c' } })
      expect(header(junk, 'x-request-id')).not.toBe('a b"c')
      // Errors and refusals before routing carry one too.
      const missing = await get(`${server.url}/api/v2/jobs/no-such-job`)
      expect(missing.status).toBe(404)
      expect(header(missing, 'x-request-id')).toBeTruthy()
      expect(header(missing, 'access-control-expose-headers')).toContain('X-Request-Id')

      const line = await server.waitForLog((l) => l.message === 'request' && l.request_id === 'edge-7f3a.42', 5_000)
      expect(line).toMatchObject({
        level: 'info',
        method: 'GET',
        path: '/api/v1?page=2',
        status: 200,
        client: '203.0.113.9',
        cache: 'HIT',
        request_id: 'edge-7f3a.42',
      })
      expect(line.bytes).toBeGreaterThan(echoed.body.length)
      expect(line.duration_ms).toBeGreaterThan(0)
      expect(Date.parse(line.time!)).toBeGreaterThan(Date.now() - 60_000)
      const madeLine = await server.waitForLog((l) => l.request_id === madeId, 5_000)
      expect(madeLine).toMatchObject({ path: '/api/v2/jobs?limit=2', status: 200, cache: 'MISS', client: '127.0.0.1' })
      const missingLine = await server.waitForLog((l) => l.request_id === header(missing, 'x-request-id'), 5_000)
      expect(missingLine).toMatchObject({ status: 404, cache: 'BYPASS' })
    } finally {
      await server.stop()
    }
  })

  it('writes none with JOBSNAP_ACCESS_LOG=false', async () => {
    const server = await ServerProcess.start({ distDir: dataset.distDir, env: { JOBSNAP_ACCESS_LOG: 'false' } })
    try {
      const response = await get(`${server.url}/api/v1`)
      expect(header(response, 'x-request-id')).toBeTruthy()
      await sleep(1500)
      expect(server.logs.filter((l) => l.message === 'request')).toEqual([])
    } finally {
      await server.stop()
    }
  })
})

describe('/ready', () => {
  it('answers 503 until the first snapshot has loaded; the API answers 503 with Retry-After meanwhile', async () => {
    // The app with a holder that has not loaded yet: the moment between the port opening and the first load.
    const config = loadConfig({}, { JOBSNAP_DIST: dataset.distDir })
    const snapshots = new SnapshotHolder(dataset.distDir, createFileCache(0))
    const { app } = createApp({ config, snapshots })
    const listening = serve(app, { port: 0, hostname: '127.0.0.1', silent: true, gracefulShutdown: false })
    await listening.ready()
    const url = listening.url!.replace(/\/$/, '')
    try {
      const ready = await get(`${url}/ready`)
      expect(ready.status).toBe(503)
      expect(header(ready, 'retry-after')).toBe('2')
      expect(JSON.parse(ready.body.toString('utf8')).error.message).toMatch(/^Not ready: starting/)
      expect((await get(`${url}/ready`, { method: 'OPTIONS' })).status).toBe(503)
      const health = await get(`${url}/health`)
      expect(health.status).toBe(200)
      expect(JSON.parse(health.body.toString('utf8')).status).toBe('starting')
      const list = await get(`${url}/api/v2/jobs`)
      expect(list.status).toBe(503)
      expect(header(list, 'retry-after')).toBe('2')
      expect(JSON.parse(list.body.toString('utf8')).error.code).toBe(503)
      // The tool endpoint answers in JSON-RPC, which an MCP client can read.
      const mcp = await fetch(`${url}/api/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      })
      expect(mcp.status).toBe(503)
      expect(mcp.headers.get('retry-after')).toBe('2')
      expect(await mcp.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 } })

      await snapshots.reload()
      expect((await get(`${url}/ready`)).status).toBe(200)
      expect((await get(`${url}/api/v2/jobs`)).status).toBe(200)
    } finally {
      await listening.close()
    }
  })

  it('answers 503 from SIGTERM on, while the rest is still served for JOBSNAP_DRAIN_MS; then the process exits 0', async () => {
    const server = await ServerProcess.start({ distDir: dataset.distDir, env: { JOBSNAP_DRAIN_MS: '2000' } })
    try {
      const ready = await get(`${server.url}/ready`)
      expect(ready.status).toBe(200)
      expect(JSON.parse(ready.body.toString('utf8'))).toMatchObject({ status: 'ready', snapshot_id: snapshotId })

      server.signal('SIGTERM')
      const draining = await server.waitForLog((l) => l.message === 'draining', 5_000)
      expect(draining.drain_ms).toBe(2000)
      const during = await get(`${server.url}/ready`)
      expect(during.status).toBe(503)
      expect(JSON.parse(during.body.toString('utf8')).error.message).toMatch(/^Not ready: draining/)
      // A load balancer's bare OPTIONS check (HAProxy's default) sees the same; only a CORS preflight gets 204.
      expect((await get(`${server.url}/ready`, { method: 'OPTIONS' })).status).toBe(503)
      const preflight = await get(`${server.url}/ready`, {
        method: 'OPTIONS',
        headers: { origin: 'https://example.org', 'access-control-request-method': 'GET' },
      })
      expect(preflight.status).toBe(204)
      expect((await get(`${server.url}/health`)).status).toBe(200)
      expect((await get(`${server.url}/api/v1`)).status).toBe(200)
      const metrics = await scrape(server.url)
      expect(sample(metrics, 'jobsnap_ready')).toBe(0)

      const exit = await Promise.race([server.exited, sleep(10_000).then(() => undefined)])
      expect(exit).toEqual({ code: 0, signal: null })
      const shuttingDown = server.logs.find((l) => l.message === 'shutting down')
      expect(Date.parse(shuttingDown!.time!) - Date.parse(draining.time!)).toBeGreaterThanOrEqual(1900)
    } finally {
      await server.stop()
    }
  })

  it('a SIGTERM repeated during the drain changes nothing: the drain runs its course, then the process exits 0', async () => {
    const server = await ServerProcess.start({ distDir: dataset.distDir, env: { JOBSNAP_DRAIN_MS: '1500' } })
    try {
      server.signal('SIGTERM')
      const draining = await server.waitForLog((l) => l.message === 'draining', 5_000)
      server.signal('SIGTERM')
      server.signal('SIGTERM')
      await sleep(300)
      expect(server.running).toBe(true)
      expect((await get(`${server.url}/ready`)).status).toBe(503)
      expect((await get(`${server.url}/api/v1`)).status).toBe(200)
      const exit = await Promise.race([server.exited, sleep(10_000).then(() => undefined)])
      expect(exit).toEqual({ code: 0, signal: null })
      expect(server.logs.filter((l) => l.message === 'draining')).toHaveLength(1)
      const shuttingDown = server.logs.find((l) => l.message === 'shutting down')
      expect(Date.parse(shuttingDown!.time!) - Date.parse(draining.time!)).toBeGreaterThanOrEqual(1400)
    } finally {
      await server.stop()
    }
  })

  // systemd stops a service by signalling every process of it (KillMode=control-group, its default): the server
  // then hears SIGTERM twice, from the manager and passed on by its launcher (the huge-pages rerun) or primary.
  it.each([
    { as: 'one process its launcher reran with huge pages', args: [], workers: 1 },
    { as: 'a cluster of two workers', args: ['--workers', '2'], workers: 2 },
  ])('`jobsnap serve` as $as drains when its whole process group gets SIGTERM', async ({ args, workers }) => {
    const server = await ServerProcess.start({
      distDir: dataset.distDir,
      env: { JOBSNAP_DRAIN_MS: '1500' },
      args,
      launcher: true,
    })
    try {
      expect((await get(`${server.url}/ready`)).status).toBe(200)
      server.signalGroup('SIGTERM')
      const draining = await server.waitForLog((l) => l.message === 'draining', 5_000)
      await sleep(300)
      expect((await get(`${server.url}/ready`)).status).toBe(503)
      expect((await get(`${server.url}/api/v1`)).status).toBe(200)
      const exit = await Promise.race([server.exited, sleep(15_000).then(() => undefined)])
      expect(exit).toEqual({ code: 0, signal: null })
      // Each server process drained once, and closed its port only after the drain.
      expect(server.logs.filter((l) => l.message === 'draining')).toHaveLength(workers)
      const closed = server.logs.filter((l) => l.message === 'shutting down' && l.workers === undefined)
      expect(closed).toHaveLength(workers)
      for (const line of closed)
        expect(Date.parse(line.time!) - Date.parse(draining.time!)).toBeGreaterThanOrEqual(1400)
    } finally {
      await server.stop()
    }
  })
})
