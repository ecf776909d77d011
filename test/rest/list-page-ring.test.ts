/**
 * Computed list pages live in one ring of memory (the response cache's),
 * not in a buffer each: these check that reusing the ring never changes a
 * byte anyone can still see. A cached entry whose bytes the ring needs again
 * must leave the cache (else a hit would send another page's bytes), and
 * bytes still being sent must never be written over (else a slow client
 * would receive a mix of pages).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { contentHash } from '../../core/index.ts'
import { computedPayload, ResponseCache, type RunningServer } from '../../runtime/index.ts'
import { slowPipelinedClient } from '../../support/raw-http.ts'
import { buildFixture, type FixtureSnapshot, startFixtureServer } from '../support/fixtures.ts'

const KB = 1024

/** A body of `length` bytes, every byte `fill`, made in the buffer the cache allocates. */
function patterned(cache: ResponseCache, key: string, length: number, fill: number) {
  let computed = false
  const answer = cache.getOrCompute(key, async (allocate) => {
    computed = true
    return computedPayload(allocate(length).fill(fill))
  })
  return answer.then((result) => ({ ...result!, computed }))
}

const allBytes = (bytes: Buffer, fill: number) => bytes.every((byte) => byte === fill)

/** True when `bytes` are a view into a larger buffer (the ring), not a buffer of their own. */
const inRing = (bytes: Buffer) => bytes.buffer.byteLength > bytes.length

describe('the response cache ring', () => {
  it('drops an entry when the ring writes over its bytes, even one the LRU kept as recently used', async () => {
    // 1 MB bound: a 512 KB ring; five 100 KB bodies fill it, the sixth goes over the oldest.
    const cache = new ResponseCache(1024 * KB, 60)
    for (let i = 0; i < 5; i++) (await patterned(cache, `page-${i}`, 100 * KB, i)).release()
    // A hit makes page-0 the most recently used for the LRU; the ring is first in, first out.
    const hit = await patterned(cache, 'page-0', 100 * KB, 0)
    expect(hit.computed).toBe(false)
    hit.release()
    ;(await patterned(cache, 'page-5', 100 * KB, 5)).release()
    const again = await patterned(cache, 'page-0', 100 * KB, 0)
    expect(again.computed).toBe(true)
    expect(allBytes(again.payload.body, 0)).toBe(true)
    again.release()
    for (const i of [2, 3, 4, 5]) {
      const kept = await patterned(cache, `page-${i}`, 100 * KB, i)
      expect(kept.computed).toBe(false)
      expect(allBytes(kept.payload.body, i)).toBe(true)
      kept.release()
    }
  })

  it('never writes over bytes still held; pages made meanwhile get buffers of their own', async () => {
    const cache = new ResponseCache(1024 * KB, 60)
    const held = await patterned(cache, 'held', 100 * KB, 7)
    expect(inRing(held.payload.body)).toBe(true)
    // Twenty laps of the ring while `held` is being "sent".
    for (let i = 0; i < 100; i++) {
      const page = await patterned(cache, `other-${i}`, 100 * KB, 100 + (i % 100))
      expect(allBytes(page.payload.body, 100 + (i % 100))).toBe(true)
      page.release()
    }
    expect(allBytes(held.payload.body, 7)).toBe(true)
    expect(cache.ringRefusals).toBeGreaterThan(0)
    held.release()
    // Released, its bytes are the ring's again: new pages go into the ring.
    const refusals = cache.ringRefusals
    for (let i = 0; i < 10; i++) {
      const page = await patterned(cache, `after-${i}`, 100 * KB, 200 + i)
      expect(inRing(page.payload.body)).toBe(true)
      page.release()
    }
    expect(cache.ringRefusals).toBe(refusals)
  })

  it('keeps compressed copies in the ring too, held with their entry', async () => {
    const cache = new ResponseCache(1024 * KB, 60)
    // Text that compresses, so the copies are small and many laps of pages pass over them.
    const text = Buffer.from(JSON.stringify(Array.from({ length: 3000 }, (_, i) => ({ id: i, title: `job ${i}` }))))
    const held = (await cache.getOrCompute('text', async (allocate) => {
      const body = allocate(text.length)
      text.copy(body)
      return computedPayload(body, undefined, allocate)
    }))!
    const brotli = (await held.payload.encoded('br'))!
    const expected = Buffer.from(brotli)
    expect(inRing(held.payload.body) && inRing(brotli)).toBe(true)
    for (let i = 0; i < 50; i++) (await patterned(cache, `other-${i}`, 100 * KB, i)).release()
    expect(brotli.equals(expected)).toBe(true)
    expect(held.payload.body.equals(text)).toBe(true)
    expect(cache.ringRefusals).toBeGreaterThan(0)
    held.release()
    const refusals = cache.ringRefusals
    for (let i = 0; i < 50; i++) (await patterned(cache, `after-${i}`, 100 * KB, i)).release()
    expect(cache.ringRefusals).toBe(refusals)
  })

  it('gives bodies too large for the ring buffers of their own, which hold nothing up', async () => {
    const cache = new ResponseCache(1024 * KB, 60)
    const large = await patterned(cache, 'large', 200 * KB, 1)
    expect(inRing(large.payload.body)).toBe(false)
    for (let i = 0; i < 20; i++) (await patterned(cache, `other-${i}`, 100 * KB, i)).release()
    expect(cache.ringRefusals).toBe(0)
    expect(allBytes(large.payload.body, 1)).toBe(true)
    large.release()
  })
})

describe('list pages over HTTP with a small ring', () => {
  let fixture: FixtureSnapshot
  let server: RunningServer
  const port = () => Number(new URL(server.url).port)

  beforeAll(async () => {
    fixture = await buildFixture({ jobs: 3000, companies: 200, seed: 5, prefix: 'list-page-ring' })
    // 1 MB: a 512 KB ring, about six 50-job pages a lap.
    server = await startFixtureServer(fixture.distDir, { JOBSNAP_CACHE_MB: 1, JOBSNAP_REST_LIMIT: 1_000_000 })
  }, 120_000)
  afterAll(async () => {
    await server?.close()
    await fixture?.cleanup()
  })

  const get = async (path: string) => {
    const response = await fetch(`${server.url}${path}`)
    return { status: response.status, headers: response.headers, body: Buffer.from(await response.arrayBuffer()) }
  }

  it('answers a page again with its own bytes after the ring has gone round', async () => {
    const first = await get('/api/v2/jobs?limit=50&page=1')
    expect(first.status).toBe(200)
    expect(first.body.length).toBeGreaterThan(40 * KB)
    for (let page = 1; page <= 30; page++)
      expect((await get(`/api/v2/jobs?limit=50&sort=salary&page=${page}`)).status).toBe(200)
    const again = await get('/api/v2/jobs?limit=50&page=1')
    expect(again.headers.get('x-cache')).toBe('MISS')
    expect(again.body.equals(first.body)).toBe(true)
    expect((await get('/api/v2/jobs?limit=50&page=1')).headers.get('x-cache')).toBe('HIT')
  })

  const refusals = async () =>
    Number(/^jobsnap_response_ring_refusals (\d+)$/m.exec((await get('/metrics')).body.toString('utf8'))?.[1])

  it('lets go of a page answered without its bytes (HEAD, 304) or with a compressed copy', async () => {
    const pages = Array.from({ length: 5 }, (_, i) => `/api/v2/jobs?limit=50&sort=date&page=${i + 30}&facets=level`)
    for (const path of pages) {
      const { headers } = await get(path)
      const etag = headers.get('etag')!
      expect((await fetch(`${server.url}${path}`, { method: 'HEAD' })).status).toBe(200)
      expect((await fetch(`${server.url}${path}`, { headers: { 'if-none-match': etag } })).status).toBe(304)
      const compressed = await fetch(`${server.url}${path}`, { headers: { 'accept-encoding': 'br' } })
      expect(compressed.headers.get('content-encoding')).toBe('br')
      await compressed.arrayBuffer()
    }
    // Were any of those still held, the ring coming round to them would refuse pages (counted).
    const before = await refusals()
    for (let i = 0; i < 40; i++)
      expect(
        (await get(`/api/v2/jobs?limit=50&sort=salary&page=${(i % 40) + 1}&salary_max=${900_000 + i}`)).status,
      ).toBe(200)
    expect(await refusals()).toBe(before)
  })

  it('sends a slow client every page intact while others make the ring go round many times', async () => {
    // One connection asks for 56 pages at once and reads nothing. The first 50 (100 jobs, too large for this
    // ring) fill the socket's buffers; the last 6 are pages in the ring, which Node keeps until the socket
    // takes them: their bytes must stay as they were meanwhile.
    const pages = [
      ...Array.from(
        { length: 50 },
        (_, i) => `/api/v2/jobs?limit=100&sort=${i < 25 ? 'date' : 'salary'}&page=${(i % 25) + 1}`,
      ),
      ...Array.from({ length: 6 }, (_, i) => `/api/v2/jobs?limit=50&sort=date&page=${i + 11}`),
    ]
    const slow = await slowPipelinedClient(port(), pages)
    await new Promise((resolve) => setTimeout(resolve, 500))
    const refusedBefore = await refusals()
    // Meanwhile, one at a time: 150 other pages, about 25 laps of the ring.
    for (let i = 0; i < 150; i++)
      expect((await get(`/api/v2/jobs?limit=50&sort=salary&page=${(i % 50) + 1}&salary_min=${i}`)).status).toBe(200)
    // The slow client's pages held the ring up: pages made meanwhile went to buffers of their own.
    expect(await refusals()).toBeGreaterThan(refusedBefore)
    const responses = await slow.readAll()
    expect(responses).toHaveLength(pages.length)
    for (const [i, response] of responses.entries()) {
      expect(response.status, pages[i]).toBe(200)
      expect(`"${contentHash(response.body)}"`, pages[i]).toBe(response.headers.etag)
      expect(response.body.equals((await get(pages[i]!)).body), pages[i]).toBe(true)
    }
  }, 60_000)
})
