/**
 * `jobsnap purge` (docs/operating.md, Commands): the published snapshot's changed-tags.txt
 * sent to Fastly, Cloudflare and Varnish, checked request by request against a
 * local HTTP server that records each one (method, path, headers, body):
 * batching, pacing, retry on 429 with Retry-After and on 5xx, `all` when the
 * tags need more requests than a minute allows, failures named with exit 1,
 * tokens required up front and never printed.
 */
import { readlink, writeFile } from 'node:fs/promises'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { CHANGED_TAGS_FILE, runPurge } from '../../build/index.ts'
import { type Config, loadConfig } from '../../core/index.ts'
import { runCli } from '../../support/processes.ts'
import { build, createDataset, type RefreshDataset } from './support/dataset.ts'

const FASTLY_TOKEN = 'fastly-secret-token-1234'
const CLOUDFLARE_TOKEN = 'cloudflare-secret-token-5678'

interface Recorded {
  method: string
  path: string
  headers: http.IncomingHttpHeaders
  body: string
  at: number
}

/** How the recording server answers the n-th request (from 0). */
type Answer = (n: number, request: Recorded) => { status: number; headers?: Record<string, string>; body?: string }

let dataset: RefreshDataset
let recorder: http.Server
let base: string
let recorded: Recorded[] = []
let answer: Answer = () => ({ status: 200, body: '{"success":true}' })

beforeAll(async () => {
  dataset = await createDataset({ prefix: 'purge', jobs: 40, companies: 8 })
  await build(dataset)
  recorder = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const entry: Recorded = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      }
      recorded.push(entry)
      const { status, headers, body } = answer(recorded.length - 1, entry)
      res.writeHead(status, { 'content-type': 'application/json', ...headers })
      res.end(body ?? '')
    })
  })
  await new Promise<void>((resolve) => recorder.listen(0, '127.0.0.1', resolve))
  base = `http://127.0.0.1:${(recorder.address() as AddressInfo).port}`
})

afterAll(async () => {
  await new Promise((resolve) => recorder?.close(resolve))
  await dataset?.cleanup()
})

beforeEach(() => {
  recorded = []
  answer = () => ({ status: 200, body: '{"success":true}' })
})

/** Replaces the published snapshot's changed-tags.txt. */
async function publishTags(tags: string[]): Promise<void> {
  await writeFile(path.join(dataset.distDir, 'current', CHANGED_TAGS_FILE), tags.map((tag) => `${tag}\n`).join(''))
}

const jobTags = (count: number) => Array.from({ length: count }, (_, i) => `job:job-number-${i}`)

function configWith(overrides: Record<string, string | number> = {}): Config {
  return loadConfig(
    {},
    {
      JOBSNAP_DIST: dataset.distDir,
      JOBSNAP_FASTLY_API_URL: `${base}/fastly`,
      JOBSNAP_CLOUDFLARE_API_URL: `${base}/cloudflare/client/v4`,
      // Paced fast enough for a test unless a case sets its own rate.
      JOBSNAP_FASTLY_PURGE_RATE: 1000,
      JOBSNAP_CLOUDFLARE_PURGE_RATE: 1000,
      ...overrides,
    },
  )
}

const ENV = { FASTLY_API_TOKEN: FASTLY_TOKEN, CLOUDFLARE_API_TOKEN: CLOUDFLARE_TOKEN }

async function purge(
  request: Parameters<typeof runPurge>[1],
  options: { config?: Config; env?: NodeJS.ProcessEnv; retryBaseMs?: number } = {},
): Promise<{ code: number; out: string[]; err: string[] }> {
  const out: string[] = []
  const err: string[] = []
  const code = await runPurge(options.config ?? configWith(), request, options.env ?? ENV, {
    out: (line) => out.push(line),
    err: (line) => err.push(line),
    retryBaseMs: options.retryBaseMs ?? 20,
  })
  // No token anywhere in what was printed.
  for (const line of [...out, ...err]) {
    expect(line).not.toContain(FASTLY_TOKEN)
    expect(line).not.toContain(CLOUDFLARE_TOKEN)
  }
  return { code, out, err }
}

describe('jobsnap purge: Fastly', () => {
  it('sends the keys in batches of at most 256, one POST per batch, with the token and in order', async () => {
    const tags = [...jobTags(600), 'lists', 'v1:25:1']
    await publishTags(tags)
    const { code, out } = await purge({ fastly: 'SVC123' })
    expect(code).toBe(0)
    expect(recorded.map((r) => [r.method, r.path])).toEqual([
      ['POST', '/fastly/service/SVC123/purge'],
      ['POST', '/fastly/service/SVC123/purge'],
      ['POST', '/fastly/service/SVC123/purge'],
    ])
    const batches = recorded.map((r) => (r.headers['surrogate-key'] as string).split(' '))
    expect(batches.map((batch) => batch.length)).toEqual([256, 256, 90])
    expect(batches.flat()).toEqual(tags)
    for (const r of recorded) {
      expect(r.headers['fastly-key']).toBe(FASTLY_TOKEN)
      expect(r.headers['fastly-soft-purge']).toBeUndefined()
    }
    // What was purged is printed, each request's tags on its line.
    expect(out).toHaveLength(3)
    expect(out[2]).toContain('purged 90 tags')
    expect(out.join(' ')).toContain('job:job-number-599')
  })

  it('asks for a soft purge with --soft', async () => {
    await publishTags(['job:a', 'lists'])
    expect((await purge({ fastly: 'SVC123', soft: true })).code).toBe(0)
    expect(recorded).toHaveLength(1)
    expect(recorded[0]!.headers['fastly-soft-purge']).toBe('1')
    expect(recorded[0]!.headers['surrogate-key']).toBe('job:a lists')
  })

  it('retries a 429 after the Retry-After it was given, then goes on', async () => {
    await publishTags(jobTags(300))
    answer = (n) =>
      n === 0 ? { status: 429, headers: { 'retry-after': '1' }, body: '{"msg":"slow down"}' } : { status: 200 }
    const { code, err } = await purge({ fastly: 'SVC123' }, { retryBaseMs: 5 })
    expect(code).toBe(0)
    expect(recorded).toHaveLength(3)
    // The retried request is the same batch, sent no sooner than Retry-After said.
    expect(recorded[1]!.headers['surrogate-key']).toBe(recorded[0]!.headers['surrogate-key'])
    expect(recorded[1]!.at - recorded[0]!.at).toBeGreaterThanOrEqual(950)
    expect(err.join('\n')).toMatch(/HTTP 429.*retrying in 1\.0 s/)
  })

  it('retries a 5xx with backoff, and after the last try exits 1 naming what was not purged', async () => {
    const tags = jobTags(300)
    await publishTags(tags)
    answer = (n) => (n === 0 ? { status: 200 } : { status: 503, body: 'backend down' })
    const { code, out, err } = await purge({ fastly: 'SVC123' }, { retryBaseMs: 5 })
    expect(code).toBe(1)
    // The first batch went through; the second was tried five times.
    expect(recorded).toHaveLength(1 + 5)
    expect(out).toHaveLength(1)
    const failure = err.find((line) => line.includes('purge failed'))!
    expect(failure).toContain('HTTP 503: backend down')
    expect(failure).toContain(`256 tags purged, 44 not purged: ${tags.slice(256).join(' ')}`)
    expect(err.at(-1)).toMatch(/stays published/)
    // The snapshot is still the published one.
    expect(await readlink(path.join(dataset.distDir, 'current'))).toMatch(/^snapshots\//)
  })

  it('does not retry a refusal (403): exits 1 at once', async () => {
    await publishTags(['job:a'])
    answer = () => ({ status: 403, body: `{"msg":"bad token ${FASTLY_TOKEN}"}` })
    const { code, err } = await purge({ fastly: 'SVC123' })
    expect(code).toBe(1)
    expect(recorded).toHaveLength(1)
    // A body echoing the token is printed with the token taken out (purge() checks no line holds it).
    expect(err.join('\n')).toContain('HTTP 403')
    expect(err.join('\n')).toContain('[redacted]')
  })

  it('refuses without FASTLY_API_TOKEN before any request', async () => {
    await publishTags(['job:a'])
    const { code, err } = await purge({ fastly: 'SVC123', cloudflare: 'ZONE1' }, { env: { CLOUDFLARE_API_TOKEN: 'x' } })
    expect(code).toBe(2)
    expect(err.join('\n')).toContain('FASTLY_API_TOKEN')
    expect(recorded).toHaveLength(0)
  })
})

describe('jobsnap purge: Cloudflare', () => {
  it('sends the tags as JSON in batches of the configured size, with a bearer token', async () => {
    const tags = jobTags(250)
    await publishTags(tags)
    const { code, out } = await purge({ cloudflare: 'zone42' })
    expect(code).toBe(0)
    expect(recorded.map((r) => [r.method, r.path])).toEqual(
      Array(3).fill(['POST', '/cloudflare/client/v4/zones/zone42/purge_cache']),
    )
    const bodies = recorded.map((r) => JSON.parse(r.body) as { tags: string[] })
    expect(bodies.map((body) => body.tags.length)).toEqual([100, 100, 50])
    expect(bodies.flatMap((body) => body.tags)).toEqual(tags)
    for (const r of recorded) {
      expect(r.headers.authorization).toBe(`Bearer ${CLOUDFLARE_TOKEN}`)
      expect(r.headers['content-type']).toBe('application/json')
    }
    expect(out).toHaveLength(3)

    recorded = []
    expect(
      (await purge({ cloudflare: 'zone42' }, { config: configWith({ JOBSNAP_CLOUDFLARE_PURGE_BATCH: 30 }) })).code,
    ).toBe(0)
    expect(recorded.map((r) => (JSON.parse(r.body) as { tags: string[] }).tags.length)).toEqual([
      30, 30, 30, 30, 30, 30, 30, 30, 10,
    ])
  })

  it('paces requests to the configured rate', async () => {
    await publishTags(jobTags(300))
    const config = configWith({ JOBSNAP_CLOUDFLARE_PURGE_RATE: 4 })
    expect((await purge({ cloudflare: 'zone42' }, { config })).code).toBe(0)
    expect(recorded).toHaveLength(3)
    // Four a second: a quarter of a second apart at least.
    expect(recorded[1]!.at - recorded[0]!.at).toBeGreaterThanOrEqual(240)
    expect(recorded[2]!.at - recorded[1]!.at).toBeGreaterThanOrEqual(240)
  })

  it('purges `all` instead when the tags need more requests than a minute of its rate allows, and says so', async () => {
    await publishTags(jobTags(500))
    // Three requests a minute; 500 tags take five.
    const config = configWith({ JOBSNAP_CLOUDFLARE_PURGE_RATE: 0.05 })
    const { code, err, out } = await purge({ cloudflare: 'zone42' }, { config })
    expect(code).toBe(0)
    expect(recorded).toHaveLength(1)
    expect(JSON.parse(recorded[0]!.body)).toEqual({ tags: ['all'] })
    expect(err.join('\n')).toContain('500 tags take 5 requests, more than the 3 a minute')
    expect(err.join('\n')).toContain('purging `all` instead')
    expect(out).toEqual(['cloudflare zone zone42: purged 1 tag: all'])
  })

  it('counts a 200 whose body says success: false as a failure', async () => {
    await publishTags(['job:a'])
    answer = () => ({ status: 200, body: '{"success":false,"errors":[{"code":1134,"message":"invalid tag"}]}' })
    const { code, err } = await purge({ cloudflare: 'zone42' })
    expect(code).toBe(1)
    expect(recorded).toHaveLength(1)
    expect(err.join('\n')).toContain('not purged: job:a')
  })

  it('retries a 429 with Retry-After on Cloudflare too', async () => {
    await publishTags(['job:a', 'lists'])
    answer = (n) =>
      n === 0 ? { status: 429, headers: { 'retry-after': '1' } } : { status: 200, body: '{"success":true}' }
    const { code } = await purge({ cloudflare: 'zone42' })
    expect(code).toBe(0)
    expect(recorded).toHaveLength(2)
    expect(recorded[1]!.at - recorded[0]!.at).toBeGreaterThanOrEqual(950)
    expect(JSON.parse(recorded[1]!.body)).toEqual({ tags: ['job:a', 'lists'] })
  })
})

describe('jobsnap purge: Varnish and the command', () => {
  it('sends PURGE with the keys in an xkey header, batched under 4 KB a header', async () => {
    const tags = jobTags(400)
    await publishTags(tags)
    const { code } = await purge({ varnish: `${base}/` })
    expect(code).toBe(0)
    expect(recorded.length).toBeGreaterThan(1)
    for (const r of recorded) {
      expect([r.method, r.path]).toEqual(['PURGE', '/'])
      expect((r.headers.xkey as string).length).toBeLessThanOrEqual(4096)
    }
    expect(recorded.flatMap((r) => (r.headers.xkey as string).split(' '))).toEqual(tags)
  })

  it('with --wait-for, purges only once every process of the origin serves the published snapshot', async () => {
    await publishTags(['job:a', 'lists'])
    const current = path.basename(await readlink(path.join(dataset.distDir, 'current')))
    // Two processes answer /ready in turn; the second is still on the old snapshot for its first few answers.
    let asked = 0
    answer = (_, r) => {
      if (r.path !== '/ready') return { status: 200 }
      asked++
      const pid = asked % 2 === 0 ? 2 : 1
      const serving = pid === 2 && asked < 8 ? 'older-snapshot' : current
      return { status: 200, body: JSON.stringify({ status: 'ready', snapshot_id: serving, pid }) }
    }
    const { code, err } = await purge({ varnish: `${base}/`, waitFor: [base] })
    expect(code).toBe(0)
    const readies = recorded.filter((r) => r.path === '/ready')
    const purges = recorded.filter((r) => r.method === 'PURGE')
    expect(readies.length).toBeGreaterThanOrEqual(9)
    expect(purges).toHaveLength(1)
    expect(purges[0]!.at).toBeGreaterThanOrEqual(readies.at(-1)!.at)
    expect(recorded.at(-1)!.method).toBe('PURGE')
    expect(err.join('\n')).toContain(`serves snapshot ${current}`)
  })

  it('with --wait-for, purges nothing and exits 1 when the origin never serves the snapshot', async () => {
    await publishTags(['job:a'])
    answer = (_, r) =>
      r.path === '/ready'
        ? { status: 200, body: JSON.stringify({ status: 'ready', snapshot_id: 'older-snapshot', pid: 1 }) }
        : { status: 200 }
    const { code, err } = await purge({ varnish: `${base}/`, waitFor: [base], waitSeconds: 1 })
    expect(code).toBe(1)
    expect(recorded.filter((r) => r.method === 'PURGE')).toEqual([])
    expect(err.join('\n')).toMatch(/does not serve snapshot .*\(it serves older-snapshot\); nothing was purged/)
  })

  it('purges `all` with --all, and says so when nothing changed', async () => {
    await publishTags([])
    const quiet = await purge({ varnish: `${base}/` })
    expect(quiet.code).toBe(0)
    expect(quiet.out.join('\n')).toContain('nothing to purge')
    expect(recorded).toHaveLength(0)
    expect((await purge({ varnish: `${base}/`, all: true })).code).toBe(0)
    expect(recorded.map((r) => r.headers.xkey)).toEqual(['all'])
  })

  it('runs as `jobsnap purge`: exit 2 without a token or a target, exit 1 naming what a refusing target did not purge', async () => {
    await publishTags(['job:a', 'lists'])
    const env = { JOBSNAP_FASTLY_API_URL: `${base}/fastly` }
    const noToken = await runCli(['purge', '--dist', dataset.distDir, '--fastly', 'SVC1'], { env })
    expect(noToken.code).toBe(2)
    expect(noToken.stderr).toContain('FASTLY_API_TOKEN')
    expect((await runCli(['purge', '--dist', dataset.distDir], { env })).code).toBe(2)
    expect(recorded).toHaveLength(0)

    answer = () => ({ status: 401, body: '{"msg":"Provided credentials are missing or invalid"}' })
    const refused = await runCli(['purge', '--dist', dataset.distDir, '--fastly', 'SVC1'], {
      env: { ...env, FASTLY_API_TOKEN: FASTLY_TOKEN },
    })
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain('not purged: job:a lists')
    expect(refused.stderr + refused.stdout).not.toContain(FASTLY_TOKEN)
    expect(recorded).toHaveLength(1)
    expect(recorded[0]!.headers['fastly-key']).toBe(FASTLY_TOKEN)
  })
})
