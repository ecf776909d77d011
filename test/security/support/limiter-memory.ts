/**
 * Run as a child process with `node --expose-gc --import tsx`: measures the
 * retained heap of the rate limiters and the response cache under floods of
 * distinct clients or distinct queries, after forcing garbage collection.
 * Prints one JSON object per line on stdout; the security suite reads them.
 *
 *   node --expose-gc --import tsx test/security/support/limiter-memory.ts [clients] [maxClients] [fullWindowClients]
 *
 * Each structure is read after the measurement, so it is still alive when the heap is measured.
 */
import {
  computedPayload,
  ResponseCache,
  SlidingWindowLimiter,
  storedEncodingsBytes,
  storedPayload,
  TokenBucketLimiter,
} from '../../../runtime/index.ts'

const gc = (globalThis as { gc?: () => void }).gc
if (!gc) throw new Error('run with node --expose-gc')

function heapUsed(): number {
  for (let i = 0; i < 4; i++) gc!()
  return process.memoryUsage().heapUsed
}

/** Memory held outside the JS heap by ArrayBuffers (every Buffer's bytes), after collection. */
function bufferBytes(): number {
  for (let i = 0; i < 4; i++) gc!()
  return process.memoryUsage().arrayBuffers
}

/** A distinct job-like JSON body of ~1.7 KB, as compressible as a real one. */
function jobBody(i: number): Buffer {
  const words = ['remote', 'senior', 'engineer', 'design', 'platform', 'data', 'team', 'hybrid', 'salary', 'python']
  const text = Array.from({ length: 200 }, (_, k) => words[(i * 7 + k * 13) % words.length]).join(' ')
  return Buffer.from(JSON.stringify({ id: i, slug: `job-${i}`, description: text }))
}

/** Distinct client keys as the limiter sees them: IPv4 addresses and IPv6 /64 prefixes, alternately. */
function clientKey(i: number): string {
  return i % 2 === 0
    ? `${(i >>> 24) & 255}.${(i >>> 16) & 255}.${(i >>> 8) & 255}.${i & 255}`
    : `2001:db8:${(i >>> 16).toString(16)}:${(i & 0xffff).toString(16)}::/64`
}

const clients = Number(process.argv[2] ?? 1_000_000)
const maxClients = Number(process.argv[3] ?? 100_000)
const fullWindowClients = Number(process.argv[4] ?? 10_000)
const now = Date.UTC(2026, 10, 22, 12)
const report = (fields: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(fields)}\n`)

// REST sliding log: one request from each of `clients` distinct clients.
{
  const before = heapUsed()
  let limiter: SlidingWindowLimiter | undefined = new SlidingWindowLimiter(60, 60_000, maxClients)
  const started = performance.now()
  for (let i = 0; i < clients; i++) limiter.hit(clientKey(i), now + (i % 1000))
  const ms = performance.now() - started
  const after = heapUsed()
  report({
    kind: 'sliding-window',
    clients,
    maxClients,
    tracked: limiter.trackedClients,
    heapBytes: after - before,
    ms,
  })
  limiter = undefined
}

// REST sliding log, worst case per entry: every remembered client with a full window (60 timestamps).
{
  const before = heapUsed()
  let limiter: SlidingWindowLimiter | undefined = new SlidingWindowLimiter(60, 60_000, fullWindowClients)
  for (let round = 0; round < 61; round++)
    for (let i = 0; i < fullWindowClients; i++) limiter.hit(clientKey(i), now + round)
  const after = heapUsed()
  report({
    kind: 'sliding-window-full',
    clients: fullWindowClients,
    maxClients: fullWindowClients,
    tracked: limiter.trackedClients,
    heapBytes: after - before,
  })
  limiter = undefined
}

// MCP token bucket: one call from each of `clients` distinct clients.
{
  const before = heapUsed()
  let limiter: TokenBucketLimiter | undefined = new TokenBucketLimiter(60, 5, maxClients)
  const started = performance.now()
  for (let i = 0; i < clients; i++) limiter.hit(clientKey(i), now + (i % 1000))
  const ms = performance.now() - started
  const after = heapUsed()
  const tracked = (limiter as unknown as { buckets: { size: number } }).buckets.size
  report({ kind: 'token-bucket', clients, maxClients, tracked, heapBytes: after - before, ms })
  limiter = undefined
}

// Response cache: 5,000 distinct ~16 KB query keys with tiny (empty-list) answers, in a 4 MB cache.
{
  const maxBytes = 4 * 1024 * 1024
  const before = heapUsed()
  let cache: ResponseCache | undefined = new ResponseCache(maxBytes, 60)
  const body = Buffer.from('{"data":[],"page":1,"limit":25,"total":0,"has_more":false}')
  const filler = 'x'.repeat(16_000)
  // Joined like canonicalV2Query joins its parts: a flat string per key, not a rope sharing `filler`.
  for (let i = 0; i < 5_000; i++)
    await cache.getOrCompute(['v2', 'snapshot', 0, i, filler].join('|'), async () => computedPayload(Buffer.from(body)))
  const after = heapUsed()
  const kept = (cache as unknown as { cache: { size: number } }).cache.size
  report({ kind: 'response-cache', entries: 5_000, kept, keyBytes: 16_000, maxBytes, heapBytes: after - before })
  cache = undefined
}

// Compressed copies of snapshot bodies (single jobs, v1 pages): 10,000 distinct ~1.7 KB bodies, brotli and gzip each.
{
  const bodies = Array.from({ length: 10_000 }, (_, i) => jobBody(i))
  const before = bufferBytes()
  for (const [i, body] of bodies.entries()) {
    const payload = storedPayload(body, `hash-${i}`)
    await payload.encoded('br')
    await payload.encoded('gzip')
  }
  const after = bufferBytes()
  report({
    kind: 'stored-encodings',
    bodies: bodies.length,
    countedBytes: storedEncodingsBytes(),
    bufferBytes: after - before,
  })
}

// Compressed copies of computed bodies in the response cache: 2,000 distinct ~5 KB pages, brotli and gzip each.
{
  const maxBytes = 64 * 1024 * 1024
  const pages = Array.from({ length: 2_000 }, (_, i) => Buffer.concat([jobBody(i), jobBody(i + 1), jobBody(i + 2)]))
  const before = bufferBytes()
  let cache: ResponseCache | undefined = new ResponseCache(maxBytes, 60)
  for (const [i, page] of pages.entries()) {
    const result = await cache.getOrCompute(`v2|snapshot|0|page=${i}`, async () => computedPayload(page))
    await result!.payload.encoded('br')
    await result!.payload.encoded('gzip')
  }
  const after = bufferBytes()
  report({ kind: 'computed-encodings', pages: pages.length, countedBytes: cache.bytes, bufferBytes: after - before })
  cache = undefined
}
