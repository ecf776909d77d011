/**
 * The REST rate limit (60 a minute per client, v1 and v2 together) cannot be
 * bypassed, and the limiters cannot be used to exhaust memory:
 * - forwarding headers from a peer that is not a trusted proxy are ignored;
 * - behind a trusted proxy, what the client writes left of the proxy's own
 *   entry is ignored, and garbage never earns a fresh bucket;
 * - IPv6 addresses inside one /64 share a bucket;
 * - v1, v2, single jobs, 404s, HEAD and every path alias share the 60;
 * - a million distinct clients keep the limiters' memory bounded by
 *   JOBSNAP_MAX_CLIENTS (measured in a child process with --expose-gc).
 * Servers run on a fixed clock so the window never slides during a test.
 * Distinct IPv4 peers come from 127.0.0.x source addresses (Linux routes all
 * of 127/8 to loopback).
 */
import { execFile } from 'node:child_process'
import net from 'node:net'
import { promisify } from 'node:util'
import fc from 'fast-check'
import ipaddr from 'ipaddr.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { resolveClient, type RunningServer, SlidingWindowLimiter, trustedProxyMatcher } from '../../runtime/index.ts'
import { buildFixture, startFixtureServer, type FixtureSnapshot } from '../support/fixtures.ts'
import { rawGet, targetOf, type RawResponse, type Target } from '../../support/raw-http.ts'

const LIMIT = 60
let fixture: FixtureSnapshot
let slug: string

beforeAll(async () => {
  fixture = await buildFixture({ jobs: 80, companies: 15, seed: 9 })
})

afterAll(async () => {
  await fixture?.cleanup()
})

/** Sends `LIMIT` requests made by `make(i)`, expecting each allowed with the remaining count going down, then returns the next one. */
async function exhaust(make: (i: number) => Promise<RawResponse>): Promise<RawResponse> {
  for (let i = 0; i < LIMIT; i++) {
    const res = await make(i)
    expect(res.status, `request ${i + 1}: ${res.text.slice(0, 120)}`).not.toBe(429)
    expect(res.headers['x-ratelimit-remaining'], `request ${i + 1}`).toBe(String(LIMIT - 1 - i))
  }
  return make(LIMIT)
}

function expect429(res: RawResponse): void {
  expect(res.status).toBe(429)
  expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1)
  expect(res.headers['x-ratelimit-remaining']).toBe('0')
  // A HEAD answer has no body to check.
  if (res.text !== '') expect(JSON.parse(res.text)).toEqual({ error: { code: 429, message: expect.any(String) } })
}

describe('a peer that is not a trusted proxy', () => {
  let server: RunningServer
  let base: Target

  beforeAll(async () => {
    server = await startFixtureServer(fixture.distDir)
    base = targetOf(server.url)
    slug = (
      JSON.parse((await rawGet({ ...base, localAddress: '127.0.0.99' }, '/api/v2/jobs?limit=1')).text) as {
        data: { slug: string }[]
      }
    ).data[0]!.slug
  })
  afterAll(async () => {
    await server?.close()
  })

  it('cannot get a fresh bucket with any spoofed forwarding header (fast-check addresses)', async () => {
    const attacker = { ...base, localAddress: '127.0.0.2' }
    const spoofs = fc.sample(
      fc.record({
        'x-forwarded-for': fc.oneof(
          fc.ipV4(),
          fc.ipV6(),
          fc.array(fc.ipV4(), { minLength: 1, maxLength: 4 }).map((ips) => ips.join(', ')),
        ),
        'x-real-ip': fc.ipV4(),
        forwarded: fc.ipV4().map((ip) => `for=${ip};proto=https`),
        'true-client-ip': fc.ipV4(),
        'cf-connecting-ip': fc.ipV6(),
        'x-client-ip': fc.ipV4(),
      }),
      { numRuns: LIMIT + 1, seed: 42 },
    )
    const next = await exhaust((i) => rawGet(attacker, '/api/v2/jobs?limit=1', spoofs[i]!))
    expect429(next)
    // Control: another peer address does get its own bucket, so a working spoof would have been seen.
    const other = await rawGet({ ...base, localAddress: '127.0.0.3' }, '/api/v2/jobs?limit=1', spoofs[0]!)
    expect(other.status).toBe(200)
    expect(other.headers['x-ratelimit-remaining']).toBe(String(LIMIT - 1))
  })

  it('v1, v2 lists, single jobs, 404s and HEAD all draw on one bucket of 60', async () => {
    const client = { ...base, localAddress: '127.0.0.4' }
    const requests: [string, string][] = [
      ['GET', '/api/v1'],
      ['GET', '/api/v2/jobs'],
      ['GET', `/api/v2/jobs/${slug}`],
      ['GET', '/api/v1?page=2&limit=100'],
      ['GET', '/api/v2/jobs?sort=salary&q=engineer'],
      ['GET', '/api/v2/jobs/no-such-job'],
      ['HEAD', '/api/v2/jobs'],
      ['HEAD', '/api/v1'],
      ['GET', '/api/v2/jobs?page=not-a-number'],
    ]
    const next = await exhaust((i) => {
      const [method, path] = requests[i % requests.length]!
      return rawGet(client, path, {}, method)
    })
    expect429(next)
    for (const [method, path] of requests) expect429(await rawGet(client, path, {}, method))
  })

  it('a CORS preflight is not counted, and says where the client stands', async () => {
    const client = { ...base, localAddress: '127.0.0.61' }
    const preflight = async (path: string) => {
      const res = await rawGet(
        client,
        path,
        { origin: 'https://example.org', 'access-control-request-method': 'GET' },
        'OPTIONS',
      )
      expect(res.status, path).toBe(204)
      return res.headers
    }
    const fresh = await preflight('/api/v1')
    expect(fresh['x-ratelimit-limit']).toBe('60')
    expect(fresh['x-ratelimit-remaining']).toBe('60')
    expect(fresh['x-ratelimit-reset'], 'nothing counted yet').toBe('0')
    expect(fresh['x-api-version']).toBe('v1')
    expect(fresh.ratelimit).toBe('"rest";r=60;t=0')
    const limited = await exhaust(async (i) => {
      // Preflights between the counted requests change nothing.
      if (i % 20 === 0) expect((await preflight(`/api/v2/jobs/${slug}`))['x-ratelimit-remaining']).toBe(String(60 - i))
      return rawGet(client, '/api/v2/jobs?limit=1')
    })
    expect429(limited)
    const after = await preflight('/api/v2/jobs')
    expect(after['x-ratelimit-remaining']).toBe('0')
    expect(Number(after['x-ratelimit-reset'])).toBeGreaterThanOrEqual(1)
    expect(after['x-api-version']).toBe('v2')
  })

  it('once limited, no path alias, encoding or method serves data past the limit', async () => {
    const client = { ...base, localAddress: '127.0.0.5' }
    expect429(await exhaust(() => rawGet(client, '/api/v1?limit=1')))
    const aliases = [
      '/api/v1',
      '/api/v1/',
      '/api/v1?',
      '/api/v1?page=1',
      '/api/v2/jobs',
      '/api/v2/jobs/',
      '/api/v2/jobs?',
      `/api/v2/jobs/${slug}`,
      `/api/v2/jobs/${slug}/`,
      '/api/v2//jobs',
      '//api/v1',
      '/api//v1',
      '/api/./v1',
      '/api/v2/./jobs',
      '/api/v2/x/../jobs',
      '/api/v2/jobs/.',
      '/api/v1/.',
      '/api/v1/..',
      '/api/v1;x',
      '/api/v1%3f',
      '/api/%76%31',
      '/api/v2/%6a%6f%62%73',
      `/api/v2/jobs/%${slug.charCodeAt(0).toString(16)}${slug.slice(1)}`,
      '/API/V1',
      '/Api/V2/Jobs',
      '/api/v1#x',
      'http://127.0.0.1/api/v1',
      'http://localhost/api/v2/jobs',
      '/api/v1%00',
      '/api/v2/jobs%2f',
      '/api/v2/jobs%20',
      '/api/v1\t',
    ]
    const leaks: string[] = []
    for (const path of aliases) {
      for (const method of ['GET', 'HEAD']) {
        const res = await rawGet(client, path, {}, method)
        const servesJobs =
          res.status === 200 &&
          (method === 'HEAD' ? res.headers['x-api-version'] !== undefined : /"(data|jobs)":\[|"slug":/.test(res.text))
        if (servesJobs || (res.status >= 200 && res.status < 300 && res.headers['x-api-version'] !== undefined))
          leaks.push(`${method} ${path} -> ${res.status}`)
      }
    }
    expect(leaks).toEqual([])
  })

  it('an IPv6 client on ::1 is limited like any other (when this machine has IPv6 loopback)', async (context) => {
    const hasIpv6 = await new Promise<boolean>((resolve) => {
      const probe = net.createServer().once('error', () => resolve(false))
      probe.listen(0, '::1', () => probe.close(() => resolve(true)))
    })
    if (!hasIpv6) return context.skip()
    const v6 = await startFixtureServer(fixture.distDir, { HOST: '::1' })
    try {
      const target = targetOf(v6.url)
      expect(target.host).toBe('::1')
      expect429(await exhaust(() => rawGet(target, '/api/v2/jobs?limit=1', { host: `[::1]:${target.port}` })))
      expect(v6.jobsnap.restLimiter.trackedClients).toBe(1)
    } finally {
      await v6.close()
    }
  })
})

describe('behind a trusted proxy', () => {
  let server: RunningServer
  let base: Target

  beforeAll(async () => {
    server = await startFixtureServer(fixture.distDir, { JOBSNAP_TRUST_PROXY: '127.0.0.0/8' })
    base = targetOf(server.url)
  })
  afterAll(async () => {
    await server?.close()
  })

  it('whatever the client writes left of the address the proxy appended is ignored', async () => {
    const proxy = { ...base, localAddress: '127.0.0.10' }
    const forged = fc.sample(fc.array(fc.oneof(fc.ipV4(), fc.ipV6()), { minLength: 1, maxLength: 5 }), {
      numRuns: LIMIT + 1,
      seed: 7,
    })
    const next = await exhaust((i) =>
      rawGet(proxy, '/api/v2/jobs?limit=1', { 'x-forwarded-for': `${forged[i]!.join(', ')}, 203.0.113.7` }),
    )
    expect429(next)
    const neighbour = await rawGet(proxy, '/api/v2/jobs?limit=1', { 'x-forwarded-for': '203.0.113.8' })
    expect(neighbour.status).toBe(200)
  })

  it('rotating through one IPv6 /64 (any notation) shares one bucket; the next /64 is a different client', async () => {
    const proxy = { ...base, localAddress: '127.0.0.11' }
    const interfaceIds = fc.sample(fc.array(fc.integer({ min: 0, max: 0xffff }), { minLength: 4, maxLength: 4 }), {
      numRuns: LIMIT + 1,
      seed: 3,
    })
    const notations = [
      (iid: number[]) => `2001:db8:aaaa:1:${iid.map((n) => n.toString(16)).join(':')}`,
      (iid: number[]) =>
        `2001:0DB8:AAAA:0001:${iid.map((n) => n.toString(16).toUpperCase().padStart(4, '0')).join(':')}`,
      (iid: number[]) => ipaddr.parse(`2001:db8:aaaa:1:${iid.map((n) => n.toString(16)).join(':')}`).toString(),
      (iid: number[]) => `[2001:db8:aaaa:1:${iid.map((n) => n.toString(16)).join(':')}]`,
      (iid: number[]) =>
        `2001:db8:aaaa:1:${iid
          .slice(0, 2)
          .map((n) => n.toString(16))
          .join(':')}:${(iid[2]! >> 8) & 255}.${iid[2]! & 255}.${(iid[3]! >> 8) & 255}.${iid[3]! & 255}`,
    ]
    const next = await exhaust((i) =>
      rawGet(proxy, '/api/v2/jobs?limit=1', { 'x-forwarded-for': notations[i % notations.length]!(interfaceIds[i]!) }),
    )
    expect429(next)
    const nextPrefix = await rawGet(proxy, '/api/v2/jobs?limit=1', { 'x-forwarded-for': '2001:db8:aaaa:2::1' })
    expect(nextPrefix.status).toBe(200)
  })

  it('garbage in X-Forwarded-For falls back to the proxy address: no fresh bucket per garbage value', async () => {
    const proxy = { ...base, localAddress: '127.0.0.12' }
    const garbage = fc.sample(
      fc.oneof(
        // Not one comma-separated part an address (ipaddr.js also reads legacy forms such as "1" or "0x7f.1" as IPv4).
        fc
          .string({ maxLength: 40 })
          .filter((s) => s.split(',').every((part) => !ipaddr.isValid(part.trim().replace(/^\[|\]$/g, '')))),
        fc.constantFrom(
          'unknown',
          '_hidden',
          '1.2.3.4:80',
          '[2001:db8::1]:443',
          '999.1.1.1',
          '1.2.3.4.5',
          '::ffff:999.1.1.1',
          'fe80::1%eth0%x',
          'unknown, nope',
          '',
        ),
      ),
      { numRuns: LIMIT + 1, seed: 5 },
    )
    const next = await exhaust((i) =>
      rawGet(proxy, '/api/v2/jobs?limit=1', { 'x-forwarded-for': garbage[i]!.replace(/[\r\n\0]/g, '') || ',' }),
    )
    expect429(next)
  })
})

describe('client identity (fast-check, in process)', () => {
  const none = trustedProxyMatcher([])
  const proxies = trustedProxyMatcher(['10.0.0.0/8', 'fd00::/8'])
  const hextet = fc.integer({ min: 0, max: 0xffff }).map((n) => n.toString(16))
  const prefix64 = fc.array(hextet, { minLength: 4, maxLength: 4 }).map((parts) => parts.join(':'))
  const iid = fc.array(hextet, { minLength: 4, maxLength: 4 }).map((parts) => parts.join(':'))

  it('any two addresses in one /64 are one client; addresses in different /64s are different clients', () => {
    fc.assert(
      fc.property(prefix64, iid, iid, prefix64, (prefix, a, b, otherPrefix) => {
        const key = resolveClient(`${prefix}:${a}`, null, none)
        expect(resolveClient(`${prefix}:${b}`, null, none)).toBe(key)
        expect(resolveClient(ipaddr.parse(`${prefix}:${b}`).toNormalizedString().toUpperCase(), null, none)).toBe(key)
        if (
          ipaddr.parse(`${prefix}::`).toNormalizedString() !== ipaddr.parse(`${otherPrefix}::`).toNormalizedString()
        ) {
          expect(resolveClient(`${otherPrefix}:${a}`, null, none)).not.toBe(key)
        }
      }),
      { numRuns: 500 },
    )
  })

  it('an IPv4 address is one client whether it arrives as IPv4 or IPv4-mapped IPv6', () => {
    fc.assert(
      fc.property(fc.ipV4(), (ip) => {
        expect(resolveClient(`::ffff:${ip}`, null, none)).toBe(resolveClient(ip, null, none))
        expect(resolveClient(`::FFFF:${ip}`, null, none)).toBe(resolveClient(ip, null, none))
      }),
      { numRuns: 300 },
    )
  })

  it('an untrusted peer is keyed by its own address whatever X-Forwarded-For says', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.ipV4(), fc.ipV6()),
        fc.oneof(
          fc.string(),
          fc.ipV4(),
          fc.ipV6(),
          fc.array(fc.ipV4()).map((a) => a.join(',')),
        ),
        (peer, header) => {
          expect(resolveClient(peer, header, none)).toBe(resolveClient(peer, null, none))
          if (!proxies(ipaddr.process(peer)))
            expect(resolveClient(peer, header, proxies)).toBe(resolveClient(peer, null, proxies))
        },
      ),
      { numRuns: 500 },
    )
  })

  it('behind trusted proxies, the client is the rightmost untrusted hop; entries to its left never matter', () => {
    const client = fc.ipV4().filter((ip) => !ip.startsWith('10.'))
    const trustedHop = fc
      .integer({ min: 0, max: 0xffffff })
      .map((n) => `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`)
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.ipV4(), fc.ipV6(), fc.string()), { maxLength: 4 }),
        client,
        fc.array(trustedHop, { maxLength: 3 }),
        trustedHop,
        (forged, real, hops, peer) => {
          const header = [...forged, real, ...hops].join(', ')
          expect(resolveClient(peer, header, proxies)).toBe(resolveClient(real, null, none))
        },
      ),
      { numRuns: 500 },
    )
  })

  it('the limiter allows exactly 60 per window per client, whatever the order of other clients', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 1, maxLength: 600 }), (order) => {
        const limiter = new SlidingWindowLimiter(LIMIT, 60_000, 1_000)
        const allowed = new Map<number, number>()
        for (const [t, client] of order.entries())
          if (limiter.hit(`c${client}`, 1_000 + t).allowed) allowed.set(client, (allowed.get(client) ?? 0) + 1)
        for (const client of new Set(order))
          expect(allowed.get(client)).toBe(Math.min(LIMIT, order.filter((c) => c === client).length))
      }),
      { numRuns: 100 },
    )
  })

  it('the limiter decides as a plain sliding log would, with many requests in one millisecond and windows expiring', () => {
    // Small limits, timestamps that repeat, creep and jump past the window: every decision and header value
    // checked against a model. (Windows of seconds: the limiter also forgets idle clients on the real clock.)
    const advance = fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 30_000 }))
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 1_000, max: 40_000 }),
        fc.array(fc.tuple(fc.integer({ min: 0, max: 2 }), advance), { minLength: 1, maxLength: 300 }),
        (limit, windowMs, steps) => {
          const limiter = new SlidingWindowLimiter(limit, windowMs, 100)
          const model = new Map<number, number[]>()
          let now = 5_000
          for (const [client, advance] of steps) {
            now += advance
            const log = (model.get(client) ?? []).filter((t) => t > now - windowMs)
            const allowed = log.length < limit
            if (allowed) log.push(now)
            model.set(client, log)
            const decision = limiter.hit(`c${client}`, now)
            expect(decision.allowed).toBe(allowed)
            expect(decision.remaining).toBe(allowed ? limit - log.length : 0)
            expect(decision.resetSeconds).toBe(Math.max(1, Math.ceil((log[0]! + windowMs - now) / 1000)))
          }
        },
      ),
      { numRuns: 300 },
    )
  })
})

describe('memory under a million distinct clients', () => {
  /**
   * Documented bounds (docs/security.md): per remembered client, at most
   * 1 KB in the REST limiter with a full window of 60 requests, 600 bytes
   * with one request, 400 bytes in the MCP bucket; the response cache stays
   * within its byte budget however long the query keys. Clients beyond
   * JOBSNAP_MAX_CLIENTS (default 100,000) are forgotten least recently seen first.
   */
  const MAX_CLIENTS = 100_000
  const FULL_WINDOW_CLIENTS = 10_000

  it(`1,000,000 clients: the limiters remember ${MAX_CLIENTS.toLocaleString('en')} and their heap stays within the bound; compressed copies hold what their caches count`, async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [
        '--expose-gc',
        '--import',
        'tsx',
        'test/security/support/limiter-memory.ts',
        '1000000',
        String(MAX_CLIENTS),
        String(FULL_WINDOW_CLIENTS),
      ],
      { cwd: process.cwd(), maxBuffer: 1024 * 1024, timeout: 90_000 },
    )
    const rows = stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, number | string>)
    const row = (kind: string) => rows.find((r) => r.kind === kind)!
    const mb = (bytes: number | string | undefined) => `${(Number(bytes) / 1024 / 1024).toFixed(1)} MB`

    const rest = row('sliding-window')
    expect(rest.tracked).toBe(MAX_CLIENTS)
    expect(Number(rest.heapBytes)).toBeLessThan(MAX_CLIENTS * 600)
    const full = row('sliding-window-full')
    expect(full.tracked).toBe(FULL_WINDOW_CLIENTS)
    expect(Number(full.heapBytes)).toBeLessThan(FULL_WINDOW_CLIENTS * 1024)
    const mcp = row('token-bucket')
    expect(mcp.tracked).toBe(MAX_CLIENTS)
    expect(Number(mcp.heapBytes)).toBeLessThan(MAX_CLIENTS * 400)
    const cache = row('response-cache')
    expect(Number(cache.kept)).toBeLessThan(Number(cache.entries))
    expect(Number(cache.heapBytes)).toBeLessThan(Number(cache.maxBytes) * 1.1)
    // What the compressed copies hold outside the heap is what their caches count (zlib's output is a
    // view of a 16 KiB working buffer: kept as it is, a ~850-byte copy held 16 KiB, ~19x its count).
    const stored = row('stored-encodings')
    expect(Number(stored.countedBytes)).toBeGreaterThan(0)
    expect(Number(stored.bufferBytes)).toBeLessThan(Number(stored.countedBytes) * 1.5)
    const computed = row('computed-encodings')
    expect(Number(computed.bufferBytes)).toBeLessThan(Number(computed.countedBytes) * 1.5)

    console.log(
      `[security] 1,000,000 distinct clients, JOBSNAP_MAX_CLIENTS=${MAX_CLIENTS}: REST limiter ${mb(rest.heapBytes)} (${Math.round(Number(rest.heapBytes) / MAX_CLIENTS)} B/client, ` +
        `${Number(rest.ms).toFixed(0)} ms), full windows ${Math.round(Number(full.heapBytes) / FULL_WINDOW_CLIENTS)} B/client (so ${mb((Number(full.heapBytes) / FULL_WINDOW_CLIENTS) * MAX_CLIENTS)} at ${MAX_CLIENTS}), ` +
        `MCP bucket ${mb(mcp.heapBytes)}; response cache with 5,000 16 KB keys: ${mb(cache.heapBytes)} in a ${mb(cache.maxBytes)} budget (${cache.kept} kept); ` +
        `compressed copies of 10,000 bodies: ${mb(stored.bufferBytes)} held for ${mb(stored.countedBytes)} counted, of 2,000 computed pages: ${mb(computed.bufferBytes)} for ${mb(computed.countedBytes)}`,
    )
  })
})
