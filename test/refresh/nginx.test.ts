/**
 * deploy/nginx.conf in front of a real `jobsnap serve`, with Debian's
 * nginx-light: the file is used as shipped, with only its deployment paths
 * (listen, root, upstream, log, temp folders) pointed at this test's. Through
 * the front a client gets the same bodies, statuses and caching headers as
 * from the server direct; single jobs and v1 pages come from the snapshot's
 * files (no jobsnap rate-limit headers, nginx's limit_req instead); every
 * other request is proxied with X-Forwarded-For, so jobsnap's limits still
 * count each client; a hot swap is seen through it; /metrics is not.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import http from 'node:http'
import path from 'node:path'
import { gunzipSync } from 'node:zlib'
import { createHash } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort, REPO_ROOT } from '../../support/processes.ts'
import { type RawResponse, rawExchange, rawGet, targetOf } from '../../support/raw-http.ts'
import { rollbackSnapshot } from '../../build/index.ts'
import { build, createDataset, editJobs, readJobIndex, retitleAll, type RefreshDataset } from './support/dataset.ts'
import { get, header, mcpPing, type HttpResult } from './support/http.ts'
import { eventually, killAll, ServerProcess } from './support/processes.ts'

const NGINX = '/usr/sbin/nginx'

let dataset: RefreshDataset
let server: ServerProcess
const nginxes: ChildProcess[] = []
let front: string
let snapshotId: string
let slugs: string[]

/** nginx with the shipped config, proxying to `upstreamPort`; `name` keeps two fronts' folders apart. */
async function startNginx(upstreamPort: number, name = 'nginx'): Promise<string> {
  if (!existsSync(NGINX))
    throw new Error(
      `${NGINX} is missing: this test runs deploy/nginx.conf in Debian's nginx-light. Install it with \`apt-get install nginx-light\` (CI's .ci/run does).`,
    )
  const dir = path.join(dataset.root, name)
  await mkdir(dir, { recursive: true })
  const port = await freePort()
  const shipped = await readFile(path.join(REPO_ROOT, 'deploy/nginx.conf'), 'utf8')
  const replace = (text: string, from: string, to: string) => {
    if (!text.includes(from)) throw new Error(`deploy/nginx.conf no longer contains ${JSON.stringify(from)}`)
    return text.replace(from, to)
  }
  let config = shipped
  // Workers must read the test's private folders: as root they stay root; otherwise nginx cannot switch user.
  config = replace(config, 'user www-data;', process.getuid?.() === 0 ? 'user root;' : '')
  config = replace(config, 'listen 80;', `listen 127.0.0.1:${port};`)
  config = replace(config, 'root /srv/jobsnap/dist/current;', `root ${dataset.distDir}/current;`)
  config = replace(config, 'server 127.0.0.1:3000;', `server 127.0.0.1:${upstreamPort};`)
  config = replace(config, '/var/log/nginx/jobsnap.access.log', path.join(dir, 'access.log'))
  config = replace(
    config,
    'http {\n',
    `http {\n    client_body_temp_path ${dir}/body;\n    proxy_temp_path ${dir}/proxy;\n`,
  )
  await writeFile(path.join(dir, 'nginx.conf'), config)
  const child = spawn(
    NGINX,
    [
      '-p',
      dir,
      '-c',
      path.join(dir, 'nginx.conf'),
      '-e',
      path.join(dir, 'error.log'),
      '-g',
      `daemon off; pid ${dir}/nginx.pid;`,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  )
  nginxes.push(child)
  let output = ''
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')))
  const url = `http://127.0.0.1:${port}`
  await eventually(
    async () => {
      if (child.exitCode !== null) throw new Error(`nginx exited: ${output}`)
      // Any answer: a front whose upstream is down answers too (502).
      return (await get(`${url}/health`).catch(() => undefined)) ? true : undefined
    },
    10_000,
    'nginx answering',
  )
  return url
}

beforeAll(async () => {
  dataset = await createDataset({ prefix: 'nginx', jobs: 120, companies: 20 })
  snapshotId = (await build(dataset)).snapshotId
  slugs = (await readJobIndex(dataset.distDir, snapshotId)).jobs.map((job) => job.slug)
  server = await ServerProcess.start({
    distDir: dataset.distDir,
    env: { JOBSNAP_TRUST_PROXY: '127.0.0.1', JOBSNAP_REST_LIMIT: '10', JOBSNAP_DRAIN_MS: '0' },
  })
  front = await startNginx(server.port)
})

afterAll(async () => {
  // SIGTERM, not SIGKILL: the master then stops its workers; killed outright, it left them running.
  for (const nginx of nginxes) {
    if (nginx.exitCode !== null) continue
    const exited = new Promise((resolve) => nginx.once('exit', resolve))
    nginx.kill('SIGTERM')
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5_000))])
    nginx.kill('SIGKILL')
  }
  await killAll()
  await dataset?.cleanup()
})

/** A GET from a given loopback address (each 127.x address is a different client to nginx and jobsnap). */
function getFrom(client: string, url: string, headers: Record<string, string> = {}): Promise<HttpResult> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { localAddress: client, agent: false, headers }, (response) => {
        const chunks: Buffer[] = []
        response.on('data', (chunk: Buffer) => chunks.push(chunk))
        response.once('end', () =>
          resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) }),
        )
      })
      .once('error', reject)
  })
}

let nextClient = 10
/** A fresh client address per comparison, so neither limit interferes with what is compared. */
const freshClient = () => `127.0.0.${nextClient++}`

/** Headers a response's caching and meaning depend on; per-request ones (Date, ids, counters) are left out. */
const COMPARED = [
  'content-type',
  'cache-control',
  'vary',
  'x-cache',
  'x-api-version',
  'x-snapshot-id',
  'access-control-allow-origin',
  'access-control-expose-headers',
  'x-content-type-options',
  'x-ignored-parameters',
  'allow',
  'location',
  // Read by a CDN in front: the static answers carry the tags jobsnap would send.
  'surrogate-key',
  'cache-tag',
  'xkey',
  'cdn-cache-control',
  'surrogate-control',
]

function comparable(result: HttpResult): Record<string, unknown> {
  return {
    status: result.status,
    body: result.body.toString('utf8'),
    ...Object.fromEntries(COMPARED.map((name) => [name, header(result, name)])),
  }
}

describe('deploy/nginx.conf in front of jobsnap', () => {
  it('answers what jobsnap answers: the same bodies, statuses and caching headers', async () => {
    const paths = [
      `/api/v2/jobs/${slugs[0]}`,
      `/api/v2/jobs/${slugs[7]}`,
      '/api/v1',
      '/api/v1?page=2',
      '/api/v1?limit=100',
      '/api/v1?page=2&limit=25',
      '/api/v1?limit=100&page=1',
      '/api/v1?page=99',
      '/api/v1?page=abc',
      '/api/v1?limit=7',
      '/api/v1/',
      `/api/v2/jobs/${slugs[0]}?utm_source=x`,
      '/api/v2/jobs/no-such-job',
      '/api/v2/jobs/Upper-Case',
      '/api/v2/jobs?limit=3&sort=salary',
      '/api/v2/jobs?limit=0&salary_min=-1',
      '/api/v2/companies?limit=2',
      '/api/v2/filters',
      '/feeds/jobs.json',
      '/openapi.yaml',
      '/nowhere',
    ]
    for (const requestPath of paths) {
      // Once each first, so both compared answers find jobsnap's response cache in the same state.
      await getFrom(freshClient(), `${server.url}${requestPath}`)
      await getFrom(freshClient(), `${front}${requestPath}`)
      const direct = await getFrom(freshClient(), `${server.url}${requestPath}`)
      const through = await getFrom(freshClient(), `${front}${requestPath}`)
      expect(comparable(through), requestPath).toEqual(comparable(direct))
      if (direct.status === 200) expect(header(through, 'etag'), requestPath).toMatch(/^"[^"]+"$/)
      expect(header(through, 'x-request-id'), requestPath).toBeTruthy()
    }
  })

  it('serves single jobs and v1 pages from the files (nginx limits them), and proxies everything else', async () => {
    const job = await getFrom(freshClient(), `${front}/api/v2/jobs/${slugs[0]}`)
    expect(header(job, 'server')).toBe('nginx')
    expect(header(job, 'surrogate-key')).toBe(`job:${slugs[0]} all`)
    expect(header(job, 'x-ratelimit-limit'), 'answered by nginx, not jobsnap').toBeUndefined()
    const v1 = await getFrom(freshClient(), `${front}/api/v1?page=2`)
    expect(header(v1, 'x-ratelimit-limit')).toBeUndefined()
    expect(header(v1, 'cache-tag')).toBe('v1:25:2,all')
    expect(header(await getFrom(freshClient(), `${front}/api/v1?limit=100&page=1`), 'xkey')).toBe('v1:100:1 all')
    const list = await getFrom(freshClient(), `${front}/api/v2/jobs?limit=3`)
    expect(header(list, 'x-ratelimit-limit'), 'proxied: jobsnap counted it').toBe('10')
    const junk = await getFrom(freshClient(), `${front}/api/v1?page=abc`)
    expect(header(junk, 'x-ratelimit-limit')).toBe('10')

    // HEAD, 304, gzip and other methods on a static path.
    const head = await new Promise<HttpResult>((resolve, reject) =>
      http
        .request(`${front}/api/v2/jobs/${slugs[0]}`, { method: 'HEAD', agent: false }, (response) => {
          response.resume()
          response.once('end', () =>
            resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.alloc(0) }),
          )
        })
        .once('error', reject)
        .end(),
    )
    expect(head.status).toBe(200)
    expect(Number(header(head, 'content-length'))).toBe(job.body.length)
    const unchanged = await getFrom(freshClient(), `${front}/api/v2/jobs/${slugs[0]}`, {
      'if-none-match': header(job, 'etag')!,
    })
    expect(unchanged.status).toBe(304)
    expect(header(unchanged, 'cache-control')).toBe('public, max-age=60')
    expect(header(unchanged, 'surrogate-key'), 'a 304 keeps its tags').toBe(`job:${slugs[0]} all`)
    const gzipped = await getFrom(freshClient(), `${front}/api/v1?page=2`, { 'accept-encoding': 'gzip, br' })
    expect(header(gzipped, 'content-encoding')).toBe('gzip')
    expect(gunzipSync(gzipped.body).equals(v1.body)).toBe(true)
    const post = await get(`${front}/api/v2/jobs/${slugs[0]}`, { method: 'POST', body: '{}' })
    expect(post.status).toBe(405)
    expect(header(post, 'allow')).toBe('GET, HEAD, OPTIONS')
    expect(JSON.parse(post.body.toString('utf8')).error.code).toBe(405)

    // MCP goes through (its loopback Host check sees the upstream's name).
    const ping = await mcpPing(front)
    expect(ping.status).toBe(200)
    // Metrics stay on the jobsnap port: through the front every client would be a loopback peer.
    const metrics = await get(`${front}/metrics`)
    expect(metrics.status).toBe(404)
    expect(JSON.parse(metrics.body.toString('utf8')).error.code).toBe(404)
  })

  it('serves the bulk exports from the files: the stored bytes, ranges and If-Range, the snapshot named', async () => {
    const index = await getFrom(freshClient(), `${front}/api/v2/exports`)
    expect(header(index, 'x-ratelimit-limit'), 'the index is jobsnap’s').toBe('10')
    const { files } = JSON.parse(index.body.toString('utf8')) as {
      files: { name: string; url: string; bytes: number; sha256: string; content_type: string }[]
    }
    expect(files.map((file) => file.name)).toEqual(['jobs.ndjson.gz', 'companies.ndjson.gz', 'jobs.parquet'])
    for (const file of files) {
      const whole = await getFrom(freshClient(), `${front}${file.url}`, { 'accept-encoding': 'gzip, br' })
      expect(whole.status).toBe(200)
      expect(header(whole, 'x-ratelimit-limit'), 'answered by nginx, not jobsnap').toBeUndefined()
      expect(header(whole, 'content-type')).toBe(file.content_type)
      expect(header(whole, 'content-encoding')).toBeUndefined()
      expect(header(whole, 'x-snapshot-id')).toBe(snapshotId)
      expect(header(whole, 'accept-ranges')).toBe('bytes')
      expect(header(whole, 'access-control-expose-headers')).toMatch(/\bContent-Range\b/)
      expect(createHash('sha256').update(whole.body).digest('hex')).toBe(file.sha256)
      const etag = header(whole, 'etag')!
      const half = Math.floor(file.bytes / 2)
      const rest = await getFrom(freshClient(), `${front}${file.url}`, { range: `bytes=${half}-`, 'if-range': etag })
      expect(rest.status).toBe(206)
      expect(rest.body.equals(whole.body.subarray(half))).toBe(true)
      const stale = await getFrom(freshClient(), `${front}${file.url}`, { range: `bytes=${half}-`, 'if-range': '"x"' })
      expect(stale.status).toBe(200)
      expect(stale.body.length).toBe(file.bytes)
      const past = await getFrom(freshClient(), `${front}${file.url}`, { range: `bytes=${file.bytes}-` })
      expect(past.status).toBe(416)
    }
  })

  it('enforces limits per client through the proxy: jobsnap for proxied paths, nginx for static ones', async () => {
    // Proxied: jobsnap's limit (10 here) counts the address nginx forwards.
    const [a, b] = [freshClient(), freshClient()]
    for (let i = 1; i <= 10; i++)
      expect((await getFrom(a, `${front}/api/v2/jobs?limit=1`)).status, `request ${i}`).toBe(200)
    const refused = await getFrom(a, `${front}/api/v2/jobs?limit=1`)
    expect(refused.status).toBe(429)
    expect(Number(header(refused, 'retry-after'))).toBeGreaterThanOrEqual(1)
    expect(JSON.parse(refused.body.toString('utf8')).error.code).toBe(429)
    expect((await getFrom(b, `${front}/api/v2/jobs?limit=1`)).status, 'another client is served').toBe(200)

    // Static: nginx's limit_req, 60 at once per address, with the same JSON error shape.
    const [c, d] = [freshClient(), freshClient()]
    const statuses: number[] = []
    for (let i = 0; i < 61; i++)
      statuses.push((await getFrom(c, `${front}/api/v2/jobs/${slugs[i % slugs.length]}`)).status)
    expect(statuses.slice(0, 60).every((status) => status === 200)).toBe(true)
    expect(statuses[60]).toBe(429)
    const limited = await getFrom(c, `${front}/api/v1`)
    expect(limited.status).toBe(429)
    expect(header(limited, 'retry-after')).toBe('1')
    expect(header(limited, 'surrogate-key'), 'an error carries no tags').toBeUndefined()
    expect(header(limited, 'content-type')).toBe('application/json; charset=utf-8')
    expect(JSON.parse(limited.body.toString('utf8')).error).toMatchObject({ code: 429 })
    expect((await getFrom(d, `${front}/api/v2/jobs/${slugs[0]}`)).status, 'another client is served').toBe(200)
  })

  it('shows a hot swap: static answers follow dist/current at once, proxied ones once jobsnap has loaded it', async () => {
    const from = server.logs.length
    await retitleAll(dataset.dataDir, 2)
    const next = await build(dataset)
    expect(next.snapshotId).not.toBe(snapshotId)
    const job = await getFrom(freshClient(), `${front}/api/v2/jobs/${slugs[0]}`)
    expect(header(job, 'x-snapshot-id')).toBe(next.snapshotId)
    expect(JSON.parse(job.body.toString('utf8')).title).toMatch(/ \(rev 2\)$/)
    await server.waitForLog(
      (line) => line.message === 'snapshot loaded' && line.snapshot_id === next.snapshotId,
      10_000,
      from,
    )
    const direct = await getFrom(freshClient(), `${server.url}/api/v2/jobs/${slugs[0]}`)
    expect(job.body.equals(direct.body), 'the file nginx sent is the body jobsnap sends').toBe(true)
    const list = await getFrom(freshClient(), `${front}/api/v2/jobs?limit=1`)
    expect(header(list, 'x-snapshot-id')).toBe(next.snapshotId)
  })
})

/** The shape every error answer has, from jobsnap or from the front: JSON body, never stored, never sniffed. */
function expectJsonError(response: RawResponse, status: number, what: string): void {
  expect(response.status, what).toBe(status)
  expect(response.headers['content-type'], what).toBe('application/json; charset=utf-8')
  expect(response.headers['cache-control'], what).toBe('no-store')
  expect(response.headers['x-content-type-options'], what).toBe('nosniff')
  expect(JSON.parse(response.text), what).toMatchObject({ error: { code: status, message: expect.any(String) } })
}

describe('deploy/nginx.conf hardened', () => {
  it('refuses /metrics in every spelling nginx normalises to it, and jobsnap refuses it when proxied', async () => {
    const target = targetOf(front)
    const spellings = [
      '/metrics',
      '/metrics/',
      '/metrics/.',
      '/metrics/x/..',
      '/%6detrics/',
      '/%6Detrics',
      '/metrics/%2e',
      '/metrics/?x',
      '/METRICS',
      '/Metrics/',
      '//metrics',
      '/api/../metrics',
      '/docs/%2e%2e/metrics',
    ]
    for (const spelling of spellings) {
      const response = await rawGet(target, spelling)
      expect(response.text, spelling).not.toContain('# HELP')
      expectJsonError(response, 404, spelling)
    }

    // jobsnap itself: one spelling (a 308), and never to a request a proxy made for someone else.
    const direct = targetOf(server.url)
    const scrape = await rawGet(direct, '/metrics')
    expect(scrape.status).toBe(200)
    expect(scrape.text).toContain('# HELP')
    const slash = await rawGet(direct, '/metrics/?x=1')
    expect(slash.status).toBe(308)
    expect(slash.headers.location).toBe('/metrics?x=1')
    const viaProxy: Record<string, string>[] = [{ 'x-forwarded-for': '203.0.113.9' }, { forwarded: 'for=203.0.113.9' }]
    for (const forwarded of viaProxy) {
      const proxied = await rawGet(direct, '/metrics', forwarded)
      expect(proxied.text).not.toContain('# HELP')
      expectJsonError(proxied, 403, JSON.stringify(forwarded))
    }
  })

  it('answers a Host no URL can hold with a 400, directly and through the front, and logs no error', async () => {
    const from = server.logs.length
    for (const host of ['1.2.3.4.5', '256.1.1.1', 'x.1', '[1.2.3.4]', '08.1.1.1']) {
      // Through the front, only what it proxies: the static files it answers itself never read Host.
      for (const requestPath of ['/feeds/jobs.rss', '/feeds/jobs.atom?category=engineering', '/api/v2/jobs?limit=1']) {
        for (const [name, url] of [
          ['direct', server.url],
          ['front', front],
        ] as const) {
          const response = await rawGet(targetOf(url), requestPath, { host })
          expectJsonError(response, 400, `${name} ${host} ${requestPath}`)
        }
      }
      expectJsonError(await rawGet(targetOf(server.url), '/api/v1', { host }), 400, `direct ${host} /api/v1`)
    }
    expect(server.logs.slice(from).filter((line) => line.level === 'error' || line.status === 500)).toEqual([])
  })

  it('answers the errors nginx makes itself with the JSON error body, no-store and nosniff', async () => {
    const target = targetOf(front)
    const big = 'a'.repeat(9 * 1024)
    expectJsonError(await rawGet(target, '/api/v1', { 'x-padding': big }), 431, 'a header over 8 KiB')
    expectJsonError(await rawGet(target, '/api/v2/jobs', { cookie: `session=${big}` }), 431, 'a cookie over 8 KiB')
    expectJsonError(await rawGet(target, `/api/v2/jobs?q=${big}`), 414, 'a URI over 8 KiB')
    expectJsonError(
      await rawExchange(
        target,
        `POST /api/mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${2 * 1024 * 1024}\r\nConnection: close\r\n\r\n`,
      ),
      413,
      'a body over 1 MiB',
    )
    expectJsonError(
      await rawExchange(
        target,
        'GET /api/v1 HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: gzip\r\nConnection: close\r\n\r\n',
      ),
      501,
      'Transfer-Encoding: gzip',
    )
    expectJsonError(await rawExchange(target, 'NOT A REQUEST\r\n\r\n'), 400, 'an unreadable request line')
    expectJsonError(await rawGet(target, '/.nginx-error'), 404, 'the error location asked for directly')

    // jobsnap down: a front whose upstream is a port nobody listens on.
    const orphan = await startNginx(await freePort(), 'nginx-orphan')
    for (const requestPath of [
      '/api/v2/jobs?limit=1',
      `/api/v2/jobs/${slugs[0]}?x=1`,
      '/api/v1?page=abc',
      '/feeds/jobs.rss',
    ])
      expectJsonError(await rawGet(targetOf(orphan), requestPath), 502, `upstream down: ${requestPath}`)
  })
})

describe('deploy/nginx.conf over job files in layers', () => {
  /** The job through the front and from jobsnap direct: the same answer; `fromFile` whether nginx answered it from a file. */
  async function expectJob(slug: string, status: number, fromFile: boolean, snapshot: string): Promise<HttpResult> {
    const through = await getFrom(freshClient(), `${front}/api/v2/jobs/${slug}`)
    const direct = await getFrom(freshClient(), `${server.url}/api/v2/jobs/${slug}`)
    expect(comparable(through), slug).toEqual(comparable(direct))
    expect(through.status, slug).toBe(status)
    expect(header(through, 'x-snapshot-id'), slug).toBe(snapshot)
    expect(header(through, 'x-ratelimit-limit') === undefined, `${slug} answered from a file`).toBe(fromFile)
    return through
  }
  const loaded = (id: string, from: number) =>
    server.waitForLog((line) => line.message === 'snapshot loaded' && line.snapshot_id === id, 10_000, from)

  it('answers a changed job from the delta, an unchanged one from the base, a gone one as jobsnap’s 404', async () => {
    let from = server.logs.length
    const base = await build(dataset, { jobDeltaMaxPercent: 0 })
    expect(base.jobBase).toBeUndefined()
    await loaded(base.snapshotId, from)
    const [changed, closed, unchanged] = (await readJobIndex(dataset.distDir, base.snapshotId)).jobs
    const before = await expectJob(unchanged!.slug, 200, true, base.snapshotId)
    await editJobs(dataset.dataDir, (jobs) => {
      jobs.find((job) => job.id === changed!.id)!.title += ' (layered)'
      jobs.find((job) => job.id === closed!.id)!.status = 'closed'
    })
    from = server.logs.length
    const delta = await build(dataset)
    expect(delta.jobBase).toBe(base.snapshotId)
    await loaded(delta.snapshotId, from)
    const edited = await expectJob(changed!.slug, 200, true, delta.snapshotId)
    expect(JSON.parse(edited.body.toString('utf8')).title).toMatch(/ \(layered\)$/)
    const after = await expectJob(unchanged!.slug, 200, true, delta.snapshotId)
    expect(header(after, 'etag'), 'the base’s file: the same ETag').toBe(header(before, 'etag'))
    await expectJob(closed!.slug, 404, false, delta.snapshotId)

    // Re-added: served from a file again.
    await editJobs(dataset.dataDir, (jobs) => {
      jobs.find((job) => job.id === closed!.id)!.status = 'live'
    })
    from = server.logs.length
    const back = await build(dataset)
    expect(back.jobBase).toBe(base.snapshotId)
    await loaded(back.snapshotId, from)
    await expectJob(closed!.slug, 200, true, back.snapshotId)
    await expectJob(changed!.slug, 200, true, back.snapshotId)

    // A rollback serves the previous snapshot's own view: the job gone again, the edit still there.
    from = server.logs.length
    expect((await rollbackSnapshot(dataset.distDir)).to).toBe(delta.snapshotId)
    await loaded(delta.snapshotId, from)
    await expectJob(closed!.slug, 404, false, delta.snapshotId)
    expect((await expectJob(changed!.slug, 200, true, delta.snapshotId)).body.equals(edited.body)).toBe(true)
    await expectJob(unchanged!.slug, 200, true, delta.snapshotId)
  })
})
