/**
 * deploy/varnish.vcl in Debian's varnishd (with varnish-modules) in front of
 * a real `jobsnap serve` that sends a shared-cache lifetime: the file is used
 * as shipped, with only its backend address pointed at this test's jobsnap.
 * Through the cache: a hit after a miss is the same bytes; after a rebuild
 * and `jobsnap purge --varnish`, what changed is fetched anew and the rest is
 * still a hit; with jobsnap stopped, cached URLs are still answered and
 * uncached ones get the JSON error; the edge counts the REST limit (the 61st
 * request in a minute is a JSON 429, MCP apart); and no answer carries
 * another client's rate-limit fields or request id.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdir, writeFile } from 'node:fs/promises'
import http from 'node:http'
import path from 'node:path'
import { gunzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort, runCli } from '../../support/processes.ts'
import { renderVcl, VARNISHD, varnishArgs, varnishMissing } from '../../support/varnish.ts'
import { build, createDataset, editJobs, readJobIndex, type RefreshDataset } from './support/dataset.ts'
import { get, header, mcpPing, type HttpResult } from './support/http.ts'
import { eventually, killAll, ServerProcess, sleep } from './support/processes.ts'

const missing = varnishMissing()
if (missing) console.warn(`deploy/varnish.vcl tests skipped: ${missing}`)

/** A varnishd child running deploy/varnish.vcl in front of `backendPort`. */
interface Edge {
  url: string
  child: ChildProcess
  output: string[]
}

const edges: Edge[] = []

async function startVarnish(root: string, name: string, backendPort: number): Promise<Edge> {
  const dir = path.join(root, name)
  await mkdir(dir, { recursive: true })
  const vclFile = path.join(dir, 'jobsnap.vcl')
  await writeFile(vclFile, await renderVcl(backendPort))
  const port = await freePort()
  const child = spawn(VARNISHD, varnishArgs({ workDir: path.join(dir, 'work'), port, vclFile }), {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const output: string[] = []
  child.stdout?.on('data', (chunk: Buffer) => output.push(chunk.toString('utf8')))
  child.stderr?.on('data', (chunk: Buffer) => output.push(chunk.toString('utf8')))
  const edge = { url: `http://127.0.0.1:${port}`, child, output }
  edges.push(edge)
  // Up, with its probe of /ready already healthy: /health comes through from jobsnap.
  await eventually(
    async () => {
      if (child.exitCode !== null) throw new Error(`varnishd exited (${child.exitCode}): ${output.join('')}`)
      return (await get(`${edge.url}/health`).catch(() => undefined))?.status === 200 ? true : undefined
    },
    20_000,
    'varnishd answering through to jobsnap',
  )
  return edge
}

async function stopVarnish(edge: Edge): Promise<void> {
  if (edge.child.exitCode !== null || edge.child.signalCode !== null) return
  const exited = new Promise((resolve) => edge.child.once('exit', resolve))
  edge.child.kill('SIGTERM')
  await Promise.race([exited, sleep(5_000)])
  edge.child.kill('SIGKILL')
}

/** A request from a given loopback address: each 127.x address is a different client to Varnish. */
function request(
  client: string,
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<HttpResult> {
  return new Promise((resolve, reject) => {
    http
      .request(
        url,
        { method: options.method ?? 'GET', localAddress: client, agent: false, headers: options.headers },
        (response) => {
          const chunks: Buffer[] = []
          response.on('data', (chunk: Buffer) => chunks.push(chunk))
          response.once('end', () =>
            resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) }),
          )
        },
      )
      .once('error', reject)
      .end(options.body)
  })
}

let nextClient = 10
/** A fresh client address per check, so the edge's limit never interferes with what is checked. */
const freshClient = () => `127.0.0.${nextClient++}`

const json = (result: HttpResult) => JSON.parse(result.body.toString('utf8'))

/** What jobsnap sends for shared caches only: never shown to clients. */
const CDN_ONLY = ['surrogate-key', 'cache-tag', 'xkey', 'cdn-cache-control', 'surrogate-control']

function expectEdgeError(result: HttpResult, status: number, what: string): void {
  expect(result.status, what).toBe(status)
  expect(header(result, 'content-type'), what).toBe('application/json; charset=utf-8')
  expect(header(result, 'cache-control'), what).toBe('no-store')
  expect(header(result, 'x-content-type-options'), what).toBe('nosniff')
  expect(json(result).error, what).toMatchObject({ code: status, message: expect.any(String) })
}

describe.skipIf(missing !== undefined)('deploy/varnish.vcl in front of jobsnap', () => {
  let dataset: RefreshDataset
  let server: ServerProcess
  let edge: Edge
  let slugs: string[]

  beforeAll(async () => {
    dataset = await createDataset({ prefix: 'varnish', jobs: 200, companies: 30 })
    const first = await readJobIndex(dataset.distDir, (await build(dataset)).snapshotId)
    slugs = first.jobs.map((job) => job.slug)
    server = await ServerProcess.start({
      distDir: dataset.distDir,
      env: {
        // A day at the edge (purged on publish); jobsnap counts the clients Varnish names.
        JOBSNAP_CDN_TTL: '86400',
        JOBSNAP_TRUST_PROXY: '127.0.0.1',
        JOBSNAP_DRAIN_MS: '0',
      },
    })
    edge = await startVarnish(dataset.root, 'varnish', server.port)
  })

  afterAll(async () => {
    for (const running of edges) await stopVarnish(running)
    await killAll()
    await dataset?.cleanup()
  })

  it('answers a hit after a miss with the same bytes, and shows clients no tags or shared lifetime', async () => {
    const paths = [
      `/api/v2/jobs/${slugs[3]}`,
      '/api/v1?page=2',
      '/api/v2/jobs?limit=3&sort=salary',
      '/api/v2/filters',
      '/api/v2/companies?limit=2',
      '/openapi.yaml',
    ]
    for (const requestPath of paths) {
      const direct = await request(freshClient(), `${server.url}${requestPath}`)
      expect(direct.status, requestPath).toBe(200)
      expect(header(direct, 'cdn-cache-control'), `${requestPath}: jobsnap sends a shared lifetime`).toMatch(
        /max-age=86400/,
      )
      const miss = await request(freshClient(), `${edge.url}${requestPath}`)
      const hit = await request(freshClient(), `${edge.url}${requestPath}`)
      expect([miss.status, hit.status], requestPath).toEqual([200, 200])
      expect([header(miss, 'x-cache'), header(hit, 'x-cache')], requestPath).toEqual(['MISS', 'HIT'])
      expect(hit.body.equals(miss.body), `${requestPath}: the hit is the miss's bytes`).toBe(true)
      expect(hit.body.equals(direct.body), `${requestPath}: and jobsnap's`).toBe(true)
      for (const result of [miss, hit]) {
        for (const name of CDN_ONLY) expect(header(result, name), `${requestPath}: ${name}`).toBeUndefined()
        expect(header(result, 'cache-control'), requestPath).toBe('public, max-age=60')
        // A browser's 60 s count from delivery: the edge's own holding time is not passed on as Age.
        expect(header(result, 'age'), `${requestPath}: no Age`).toBeUndefined()
        expect(header(result, 'vary'), requestPath).toBe('Accept-Encoding')
        expect(header(result, 'x-origin-cache'), `${requestPath}: jobsnap's own cache status, renamed`).toMatch(
          /^(HIT|MISS)$/,
        )
      }

      // A gzip client is its own variant (Vary: Accept-Encoding), also a hit the second time, same content.
      const zipped = await request(freshClient(), `${edge.url}${requestPath}`, {
        headers: { 'accept-encoding': 'gzip, br' },
      })
      const zippedAgain = await request(freshClient(), `${edge.url}${requestPath}`, {
        headers: { 'accept-encoding': 'gzip' },
      })
      expect(header(zippedAgain, 'x-cache'), requestPath).toBe('HIT')
      expect(header(zippedAgain, 'content-encoding'), requestPath).toBe('gzip')
      expect(zippedAgain.body.equals(zipped.body), requestPath).toBe(true)
      expect(gunzipSync(zippedAgain.body).equals(direct.body), requestPath).toBe(true)
    }

    // MCP POSTs go through, never from the cache.
    for (let i = 0; i < 2; i++) {
      const ping = await mcpPing(edge.url)
      expect(ping.status).toBe(200)
      expect(header(ping, 'x-cache')).toBe('BYPASS')
    }
    // An error jobsnap answers is not stored either.
    for (let i = 0; i < 2; i++) {
      const gone = await request(freshClient(), `${edge.url}/api/v2/jobs/no-such-job`)
      expect(gone.status).toBe(404)
      expect(header(gone, 'x-cache')).not.toBe('HIT')
    }
  })

  it("never replays one client's rate-limit fields or request id to another", async () => {
    const [a, b] = [freshClient(), freshClient()]
    const requestPath = `/api/v2/jobs/${slugs[5]}`
    // Client a spends half its minute first, so its numbers differ from b's.
    for (let i = 0; i < 30; i++) await request(a, `${edge.url}/api/v1`)
    const first = await request(a, `${edge.url}${requestPath}`, { headers: { 'x-request-id': 'client-a-request' } })
    expect(header(first, 'x-cache')).toBe('MISS')
    expect(header(first, 'x-request-id')).toBe('client-a-request')
    expect(Number(header(first, 'x-ratelimit-remaining'))).toBeLessThanOrEqual(30)

    const second = await request(b, `${edge.url}${requestPath}`, { headers: { 'x-request-id': 'client-b-request' } })
    expect(header(second, 'x-cache')).toBe('HIT')
    expect(header(second, 'x-request-id')).toBe('client-b-request')
    expect(header(second, 'x-ratelimit-limit')).toBe('60')
    expect(header(second, 'x-ratelimit-remaining'), "b's own count, not a's").toBe('59')
    expect(header(second, 'ratelimit')).toBe('"rest";r=59;t=1')
    expect(header(second, 'ratelimit-policy')).toBe('"rest";q=60;w=60')

    // Without an id of its own a client gets a new one each time, never the one a stored answer was fetched with.
    const third = await request(freshClient(), `${edge.url}${requestPath}`)
    const fourth = await request(freshClient(), `${edge.url}${requestPath}`)
    const ids = [header(third, 'x-request-id'), header(fourth, 'x-request-id')]
    expect(ids.every((id) => id && id !== 'client-a-request' && id !== 'client-b-request')).toBe(true)
    expect(ids[0]).not.toBe(ids[1])
    for (const result of [second, third, fourth]) {
      expect(header(result, 'x-cache')).toBe('HIT')
      expect(header(result, 'x-ratelimit-remaining')).toBe('59')
    }
  })

  it('counts the REST limit at the edge: the 61st request in a minute is a JSON 429; MCP has its own bucket', async () => {
    const [client, other] = [freshClient(), freshClient()]
    const paths = ['/api/v1', `/api/v2/jobs/${slugs[0]}`, '/api/v2/jobs?limit=1', '/feeds/jobs.json']
    for (let i = 0; i < 60; i++) {
      const result = await request(client, `${edge.url}${paths[i % paths.length]}`)
      expect(result.status, `request ${i + 1}`).toBe(200)
      // MCP is counted apart: these do not use up the REST minute.
      if (i % 20 === 0) expect((await mcpPing(edge.url)).status).toBe(200)
    }
    const refused = await request(client, `${edge.url}/api/v2/jobs/${slugs[0]}`)
    expectEdgeError(refused, 429, 'the 61st')
    expect(Number(header(refused, 'retry-after'))).toBeGreaterThanOrEqual(1)
    expect(header(refused, 'x-ratelimit-remaining')).toBe('0')
    expect(json(refused).error.message).toMatch(/60 requests per minute/)
    // v1 shares the minute; other clients do not.
    expectEdgeError(await request(client, `${edge.url}/api/v1?page=3`), 429, 'v1 after v2')
    expect((await request(other, `${edge.url}/api/v2/jobs/${slugs[0]}`)).status).toBe(200)
    // MCP answers carry the MCP bucket's fields, not the REST one's.
    const ping = await mcpPing(edge.url)
    expect(ping.status).toBe(200)
    expect(header(ping, 'ratelimit-policy')).toBe('"mcp";q=60;w=12')
  })

  it('refuses, in JSON, a PURGE from outside its list and methods it does not know', async () => {
    const purge = await request(freshClient(), `${edge.url}/`, { method: 'PURGE', headers: { xkey: 'all' } })
    expectEdgeError(purge, 403, 'PURGE from 127.0.0.x')
    const brew = await request(freshClient(), `${edge.url}/api/v1`, { method: 'BREW' })
    expectEdgeError(brew, 405, 'an unknown method')
    expect(header(brew, 'allow')).toBe('GET, HEAD, OPTIONS')
    const noKeys = await request('127.0.0.1', `${edge.url}/`, { method: 'PURGE' })
    expectEdgeError(noKeys, 400, 'PURGE without tags')
    // A write method on the API is jobsnap's to refuse (its 405 names the allowed methods), never cached.
    const post = await request(freshClient(), `${edge.url}/api/v2/jobs/${slugs[0]}`, { method: 'POST', body: '{}' })
    expect(post.status).toBe(405)
    expect(header(post, 'x-cache')).toBe('BYPASS')
  })

  it('after a 1% rebuild and `jobsnap purge --varnish`, fetches what changed anew and keeps the rest', async () => {
    const changed = slugs.filter((_, i) => i % 100 === 7)
    const unchanged = slugs[50]!
    // Lists computed per query carry the `lists` tag: any job changing purges them all.
    const lists = ['/api/v2/jobs?limit=5', '/api/v2/filters', '/api/v2/companies?limit=3', '/feeds/jobs.json']
    // v1 pages are tagged one by one: only those holding a changed job are purged.
    const v1Pages = ['/api/v1', ...Array.from({ length: 8 }, (_, i) => `/api/v1?page=${i + 1}`)]
    const v1Before = await Promise.all(v1Pages.map((url) => request(freshClient(), `${server.url}${url}`)))
    const urls = [...changed.map((slug) => `/api/v2/jobs/${slug}`), `/api/v2/jobs/${unchanged}`, ...lists, ...v1Pages]
    for (const url of urls) await request(freshClient(), `${edge.url}${url}`)
    for (const url of urls)
      expect(header(await request(freshClient(), `${edge.url}${url}`), 'x-cache'), `${url} cached`).toBe('HIT')

    await editJobs(dataset.dataDir, (jobs) => {
      for (const job of jobs) if (changed.includes(job.slug)) job.title = `${job.title} (edited)`
    })
    const from = server.logs.length
    const next = await build(dataset)
    await server.waitForLog(
      (line) => line.message === 'snapshot loaded' && line.snapshot_id === next.snapshotId,
      15_000,
      from,
    )
    const v1After = await Promise.all(v1Pages.map((url) => request(freshClient(), `${server.url}${url}`)))
    const v1Changed = v1Pages.filter((_, i) => !v1After[i]!.body.equals(v1Before[i]!.body))
    const v1Same = v1Pages.filter((url) => !v1Changed.includes(url))
    expect(v1Changed.length, 'some v1 pages hold a changed job').toBeGreaterThan(0)
    expect(v1Same.length, 'some do not').toBeGreaterThan(0)
    // Not purged yet: the edge still answers the old copy, as a day's lifetime says it may.
    const before = await request(freshClient(), `${edge.url}/api/v2/jobs/${changed[0]}`)
    expect(header(before, 'x-cache')).toBe('HIT')
    expect(json(before).title).not.toMatch(/\(edited\)$/)

    const purge = await runCli(['purge', '--dist', dataset.distDir, '--varnish', edge.url, '--wait-for', server.url], {
      timeoutMs: 60_000,
    })
    expect(purge.code, `${purge.stdout}\n${purge.stderr}`).toBe(0)

    for (const slug of changed) {
      const result = await request(freshClient(), `${edge.url}/api/v2/jobs/${slug}`)
      expect(header(result, 'x-cache'), slug).toBe('MISS')
      expect(json(result).title, slug).toMatch(/\(edited\)$/)
      expect(header(result, 'x-snapshot-id')).toBe(next.snapshotId)
    }
    for (const url of [...lists, ...v1Changed]) {
      const result = await request(freshClient(), `${edge.url}${url}`)
      expect(header(result, 'x-cache'), url).toBe('MISS')
      expect(header(result, 'x-snapshot-id'), url).toBe(next.snapshotId)
    }
    for (const url of [`/api/v2/jobs/${unchanged}`, ...v1Same]) {
      const kept = await request(freshClient(), `${edge.url}${url}`)
      expect(header(kept, 'x-cache'), `${url}: unchanged, still a hit`).toBe('HIT')
    }
  })

  it('serves stale while revalidating and while jobsnap is down; an uncached URL then gets the JSON error', async () => {
    // A second jobsnap with a short shared lifetime (2 s, then 2 s of stale-while-revalidate, 5 min if it fails).
    const short = await ServerProcess.start({
      distDir: dataset.distDir,
      env: {
        JOBSNAP_CDN_TTL: '2',
        JOBSNAP_CDN_STALE_WHILE_REVALIDATE: '2',
        JOBSNAP_CDN_STALE_IF_ERROR: '300',
        JOBSNAP_TRUST_PROXY: '127.0.0.1',
        JOBSNAP_DRAIN_MS: '0',
      },
    })
    const shortEdge = await startVarnish(dataset.root, 'varnish-short', short.port)
    const cached = [`/api/v2/jobs/${slugs[1]}`, '/api/v1?page=3', '/api/v2/jobs?limit=2&sort=salary']
    for (const url of cached) {
      expect(header(await request(freshClient(), `${shortEdge.url}${url}`), 'x-cache'), url).toBe('MISS')
      expect(header(await request(freshClient(), `${shortEdge.url}${url}`), 'x-cache'), url).toBe('HIT')
    }
    // Past its lifetime but within stale-while-revalidate: answered from the cache at once.
    await sleep(2_500)
    const stale = await request(freshClient(), `${shortEdge.url}${cached[0]}`)
    expect(stale.status).toBe(200)
    expect(header(stale, 'x-cache')).toBe('HIT')
    // Past both while jobsnap is healthy: fetched anew before answering.
    await sleep(4_500)
    const refetched = await request(freshClient(), `${shortEdge.url}${cached[1]}`)
    expect(refetched.status).toBe(200)
    expect(header(refetched, 'x-cache'), 'past stale-while-revalidate, jobsnap up').toBe('MISS')
    // Everything cached again and left past its lifetime and stale-while-revalidate; then jobsnap goes away.
    // At once (the probe has not noticed yet: the edge tries jobsnap first) and from then on, every cached URL
    // is still answered.
    for (const url of cached) await request(freshClient(), `${shortEdge.url}${url}`)
    await sleep(4_500)
    await short.stop()
    const deadline = Date.now() + 8_000
    let rounds = 0
    while (Date.now() < deadline || rounds < 2) {
      for (const url of cached) {
        const result = await request(freshClient(), `${shortEdge.url}${url}`)
        expect(result.status, `${url} with jobsnap down (round ${rounds})`).toBe(200)
        expect(header(result, 'x-cache'), url).toBe('HIT')
      }
      rounds++
      await sleep(250)
    }
    const uncached = await request(freshClient(), `${shortEdge.url}/api/v2/jobs/${slugs[2]}`)
    expectEdgeError(uncached, 503, 'an uncached URL with jobsnap down')
    expect(Number(header(uncached, 'retry-after'))).toBeGreaterThanOrEqual(1)
  })
})
