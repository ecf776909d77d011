/**
 * The packed job bodies: what the build writes is, body for body, the bytes
 * of the per-job files and v1 pages a static server would send, and the
 * runtime's reader (in memory and from the file) hands back exactly those
 * bytes for any position, range or selection.
 */
import { readFileSync } from 'node:fs'
import { mkdir, readFile, realpath, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PackedBodiesWriter } from '../../build/index.ts'
import {
  CURRENT_LINK,
  PackedBodies,
  parseV2ListQuery,
  type SnapshotManifest,
  snapshotPaths,
  v1PageFrame,
  v1UsageNotice,
} from '../../core/index.ts'
import { createFileCache, loadSnapshot, queryContext, runV2Query } from '../../runtime/index.ts'
import { readSnapshotJobIndex } from '../../support/job-index.ts'
import { buildFixture, FIXTURE_NOW, tempDir, type FixtureSnapshot } from '../support/fixtures.ts'

const lengthsOf = (bytes: Buffer) =>
  new Uint32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length))

describe('PackedBodies', () => {
  let dir: string
  const bodies = Array.from({ length: 300 }, (_, i) =>
    Buffer.from(JSON.stringify({ i, text: 'x'.repeat(i % 17), quote: 'a,"b"\n' })),
  )
  let lengths: Uint32Array

  beforeAll(async () => {
    dir = await tempDir('packed')
    await mkdir(path.join(dir, 'index'))
    const writer = new PackedBodiesWriter(dir, snapshotPaths.v2Bodies)
    for (const body of bodies) writer.add(body)
    const finished = await writer.finish()
    lengths = lengthsOf(finished.lengths)
    await writeFile(path.join(dir, snapshotPaths.v2Bodies.lengths), finished.lengths)
  })

  const joined = (positions: number[]) => Buffer.from(positions.map((p) => bodies[p]!.toString()).join(','))

  for (const home of ['inMemory', 'inFile'] as const) {
    it(`${home}: every body, range and selection is the exact bytes`, () => {
      const file = path.join(dir, snapshotPaths.v2Bodies.bodies)
      const packed =
        home === 'inMemory'
          ? PackedBodies.inMemory(readFileSync(file), lengths, file)
          : PackedBodies.inFile(file, lengths, file)
      try {
        expect(packed.size).toBe(bodies.length)
        for (let p = 0; p < bodies.length; p++) expect(packed.body(p).equals(bodies[p]!)).toBe(true)
        expect(packed.range(10, 35).equals(joined(Array.from({ length: 25 }, (_, i) => 10 + i)))).toBe(true)
        expect(packed.range(5, 5).length).toBe(0)
        for (const positions of [[0, 1, 2], [3, 5, 8, 9], [0, 299], [17], [], [1, 2, 3, 100, 101]]) {
          expect(packed.pick(positions).equals(joined(positions)), `pick ${positions}`).toBe(true)
        }
        expect(packed.join([299, 0, 150]).equals(joined([299, 0, 150]))).toBe(true)
        // A framed range (how a v1 page is made): head, the range, tail, multi-byte characters included.
        const framed = (from: number, to: number) => packed.framedRange(from, to, '{"é":[', '],"ü":1}')
        expect(framed(10, 35).toString()).toBe(`{"é":[${packed.range(10, 35).toString()}],"ü":1}`)
        expect(framed(0, bodies.length).toString()).toBe(`{"é":[${joined(bodies.map((_, i) => i)).toString()}],"ü":1}`)
        expect(framed(7, 7).toString()).toBe('{"é":[],"ü":1}')
        const [head, tail] = [Buffer.from('{"data":['), Buffer.from(']}')]
        expect(packed.join([299, 0, 150], head, tail).toString()).toBe(`{"data":[${joined([299, 0, 150]).toString()}]}`)
        expect(packed.join([], head, tail).toString()).toBe('{"data":[]}')
        // Bodies close together in the file are read at once (consecutive ones straight into the page, others
        // through a scratch buffer): any mix of order and distance gives the same bytes.
        const everyOther = bodies.map((_, i) => i).filter((i) => i % 2 === 0)
        for (const positions of [[3, 5, 8, 9, 10, 200, 201, 150, 0, 1, 299], everyOther, [7, 6, 5], [40, 41, 43, 42]])
          expect(
            packed.join(positions, head, tail).equals(Buffer.concat([head, joined(positions), tail])),
            `join ${positions}`,
          ).toBe(true)
        // The joined ranges are JSON array contents.
        expect(JSON.parse(`[${packed.range(0, bodies.length).toString()}]`)).toHaveLength(bodies.length)
      } finally {
        packed.close()
      }
    })
  }

  it('inFile keeps the newest and the best-paid bodies in memory once read, and reads the rest each time', async () => {
    const file = path.join(dir, 'hot-v2-jobs.bin')
    const original = readFileSync(path.join(dir, snapshotPaths.v2Bodies.bodies))
    await writeFile(file, original)
    // "Best paid first" here is position 0 (also among the newest, so held once), then the highest positions;
    // a budget of about 40 bodies, half for each end.
    const order = Uint32Array.from([0, ...bodies.map((_, i) => bodies.length - 1 - i).filter((p) => p !== 0)])
    const rankOf = new Uint32Array(bodies.length)
    order.forEach((p, rank) => {
      rankOf[p] = rank
    })
    const budget = bodies.slice(0, 40).reduce((sum, body) => sum + body.length, 0)
    const packed = PackedBodies.inFile(file, lengths, file, { bytes: budget, order, rankOf })
    try {
      const [head, tail] = [Buffer.from('{"data":['), Buffer.from(']}')]
      const every = bodies.map((_, i) => i)
      const mixed = [0, 1, 150, 151, 299, 2, 298, 152, 60, 3]
      for (const positions of [every, [...every].reverse(), mixed, [299], [0]])
        expect(packed.join(positions, head, tail).equals(Buffer.concat([head, joined(positions), tail]))).toBe(true)
      // The file's bytes change under the open descriptor: the bodies already held still come from memory.
      await writeFile(file, Buffer.alloc(original.length, 'x'))
      const held = [0, 1, 2, 3, 298, 299]
      expect(packed.join(held).equals(joined(held))).toBe(true)
      expect(packed.join([150]).toString()).toBe('x'.repeat(bodies[150]!.length))
      // Held ones between bodies read from the file: each from its own home.
      expect(packed.join([2, 150, 299]).toString()).toBe(
        `${bodies[2]!.toString()},${'x'.repeat(bodies[150]!.length)},${bodies[299]!.toString()}`,
      )
    } finally {
      packed.close()
    }
  })

  it('refuses lengths that do not add up to the file', () => {
    const file = path.join(dir, snapshotPaths.v2Bodies.bodies)
    const wrong = Uint32Array.from(lengths)
    wrong[7]! += 1
    expect(() => PackedBodies.inMemory(readFileSync(file), wrong, file)).toThrow(/lengths add up to/)
    expect(() => PackedBodies.inFile(file, wrong.subarray(1), file)).toThrow(/lengths add up to/)
  })
})

describe('a built snapshot', () => {
  let fixture: FixtureSnapshot
  let snapshotDir: string

  beforeAll(async () => {
    fixture = await buildFixture({ jobs: 400, companies: 50, seed: 5 })
    snapshotDir = await realpath(path.join(fixture.distDir, CURRENT_LINK))
  })
  afterAll(() => fixture?.cleanup())

  const read = (file: string) => readFile(path.join(snapshotDir, file))

  it('packs every v2 job body exactly as its file, in date order', async () => {
    const index = await readSnapshotJobIndex(snapshotDir)
    const file = path.join(snapshotDir, snapshotPaths.v2Bodies.bodies)
    const packed = PackedBodies.inMemory(
      readFileSync(file),
      lengthsOf(await read(snapshotPaths.v2Bodies.lengths)),
      file,
    )
    expect(packed.size).toBe(index.jobs.length)
    for (const [p, job] of index.jobs.entries())
      expect(packed.body(p).equals(await read(snapshotPaths.v2Job(job.slug))), job.slug).toBe(true)
  })

  it('packs the v1 jobs so that every precomputed v1 page is its frame around one range', async () => {
    const manifest = JSON.parse((await read(snapshotPaths.manifest)).toString()) as SnapshotManifest
    const file = path.join(snapshotDir, snapshotPaths.v1Bodies.bodies)
    const packed = PackedBodies.inFile(file, lengthsOf(await read(snapshotPaths.v1Bodies.lengths)), file)
    try {
      const total = manifest.counts.live_jobs
      for (const limit of manifest.v1_limits) {
        for (let page = 1; page <= Math.max(1, Math.ceil(total / limit)); page++) {
          const { head, tail } = v1PageFrame(v1UsageNotice(manifest.site_url), page, limit, total)
          const composed = Buffer.concat([
            Buffer.from(head),
            packed.range((page - 1) * limit, Math.min(total, page * limit)),
            Buffer.from(tail),
          ])
          expect(composed.equals(await read(snapshotPaths.v1Page(limit, page))), `v1 page ${page} of ${limit}`).toBe(
            true,
          )
        }
      }
    } finally {
      packed.close()
    }
  })

  it('records the hash of each packed file in the manifest', async () => {
    const manifest = JSON.parse((await read(snapshotPaths.manifest)).toString()) as SnapshotManifest
    for (const paths of [snapshotPaths.v2Bodies, snapshotPaths.v1Bodies]) {
      expect(manifest.index_hashes?.[paths.bodies]).toMatch(/^[\w-]{43}$/)
      expect(manifest.index_hashes?.[paths.lengths]).toMatch(/^[\w-]{43}$/)
    }
  })

  it('a server loads the same bodies whether it holds them in memory or reads them by position', async () => {
    // Read by position: with none kept in memory once read, with a few (10 KB), and with every one (the default).
    const [held, ...read] = [
      await loadSnapshot(snapshotDir, createFileCache(0)),
      await loadSnapshot(snapshotDir, createFileCache(0), 0, undefined, 0),
      await loadSnapshot(snapshotDir, createFileCache(0), 0, undefined, 10_000),
      await loadSnapshot(snapshotDir, createFileCache(0), 0),
    ]
    try {
      expect(held.v2Bodies.size).toBeGreaterThan(300)
      const every = Array.from({ length: held.v2Bodies.size }, (_, p) => p)
      for (const bodies of read.map((s) => s.v2Bodies)) {
        for (let p = 0; p < held.v2Bodies.size; p++) expect(bodies.body(p).equals(held.v2Bodies.body(p))).toBe(true)
        for (const positions of [[5, 300, 0, 42, 43, 44, held.v2Bodies.size - 1], every, [...every].reverse()])
          for (const round of [1, 2])
            expect(bodies.join(positions).equals(held.v2Bodies.join(positions)), `round ${round}`).toBe(true)
      }
    } finally {
      for (const s of [held, ...read]) s.close()
    }
  })

  it('a server answers every q the same with its search postings held or read by position', async () => {
    // bodiesInMemoryBytes 0: the snapshot counts as large, so its postings stay in the file, read a list at a time.
    const [held, read] = [
      await loadSnapshot(snapshotDir, createFileCache(0)),
      await loadSnapshot(snapshotDir, createFileCache(0), 0),
    ]
    try {
      const { terms } = JSON.parse((await readFile(path.join(snapshotDir, snapshotPaths.searchTerms))).toString()) as {
        terms: string[]
      }
      expect(terms.length).toBeGreaterThan(50)
      const queries = [
        ...terms,
        ...terms.map((term) => term.slice(0, 3)),
        ...terms.slice(0, 40).map((term, i) => `${term} ${terms[(i * 7) % terms.length]}`),
        'nosuchwordanywhere',
      ]
      // Twice: the second time the lists come from the cache of lists read (and their bitsets are kept).
      for (const round of [1, 2])
        for (const q of queries) {
          const parsed = parseV2ListQuery(new URLSearchParams({ q, limit: '100', sort: 'salary' }))
          if (!parsed.ok) throw new Error(q)
          const now = Date.parse(FIXTURE_NOW.toISOString())
          const [a, b] = [held, read].map((s) => runV2Query(queryContext(s, now), parsed.value))
          expect(b, `${q} (round ${round})`).toEqual(a)
        }
      expect(read.text.match('nosuchwordanywhere').some((bit) => bit !== 0)).toBe(false)
    } finally {
      held.close()
      read.close()
    }
  })

  it('a server refuses the snapshot once a byte of its v2 bodies changed (last: it damages the fixture)', async () => {
    const loaded = await loadSnapshot(snapshotDir, createFileCache(0))
    loaded.close()
    const file = path.join(snapshotDir, snapshotPaths.v2Bodies.bodies)
    const bytes = await readFile(file)
    bytes[100] = bytes[100] === 0x41 ? 0x42 : 0x41
    await writeFile(file, bytes)
    await expect(loadSnapshot(snapshotDir, createFileCache(0))).rejects.toThrow(/v2-jobs\.bin does not match the hash/)
    // Also when the bodies are to be read by position rather than held in memory (JOBSNAP_BODIES_MEMORY_MB=0).
    await expect(loadSnapshot(snapshotDir, createFileCache(0), 0)).rejects.toThrow(
      /v2-jobs\.bin does not match the hash/,
    )
  })
})
