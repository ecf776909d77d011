/**
 * index/jobs.bin: the job index the server loads as typed arrays is, value
 * for value, the index it would build from the index/jobs.json of older
 * builds (written here on request, from the same build), and a changed
 * byte makes the server refuse the snapshot.
 */
import { readFile, realpath, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CURRENT_LINK, readJobIndexFile, type SnapshotJobIndex, snapshotPaths, VALUE_FACETS } from '../../core/index.ts'
import { createFileCache, JobIndex, loadSnapshot } from '../../runtime/index.ts'
import { buildFixture, type FixtureSnapshot } from '../support/fixtures.ts'

const FACETS = ['category', 'level', 'schedule', 'work_arrangement', 'tag', 'place', 'company'] as const

describe('index/jobs.bin', () => {
  let fixture: FixtureSnapshot
  let snapshotDir: string

  beforeAll(async () => {
    fixture = await buildFixture({ jobs: 400, companies: 50, seed: 9, legacyJobIndex: true })
    snapshotDir = await realpath(path.join(fixture.distDir, CURRENT_LINK))
  })
  afterAll(() => fixture?.cleanup())

  const read = (file: string) => readFile(path.join(snapshotDir, file))

  it('holds the same index as index/jobs.json', async () => {
    const fromJson = JobIndex.from(JSON.parse((await read(snapshotPaths.jobIndex)).toString()) as SnapshotJobIndex)
    const fromFile = JobIndex.fromFile(readJobIndexFile(await read(snapshotPaths.jobIndexBinary), 'jobs.bin'))
    expect(fromFile.size).toBe(fromJson.size)
    expect(fromJson.size).toBeGreaterThan(300)
    for (const column of ['postedAt', 'expiresAt', 'salaryLow', 'salaryHigh', 'salaryOrder', 'salaryRank'] as const)
      expect([...fromFile[column]], column).toEqual([...fromJson[column]])
    expect(fromFile.bySalary).toEqual(fromJson.bySalary)
    expect(fromFile.salaryLowOrder()).toEqual(fromJson.salaryLowOrder())
    for (let p = 0; p < fromJson.size; p++) {
      expect(fromFile.hashAt(p)).toBe(fromJson.hashAt(p))
      for (const facet of VALUE_FACETS) expect(fromFile.valueAt(facet, p)).toBe(fromJson.valueAt(facet, p))
    }
    expect(fromFile.slugsInOrder()).toEqual(fromJson.slugsInOrder())
    for (const slug of fromJson.slugsInOrder()) expect(fromFile.positionOf(slug)).toBe(fromJson.positionOf(slug))
    expect(fromFile.positionOf('no-such-job')).toBeUndefined()
    for (const facet of FACETS) {
      const values = fromJson.valuesOf(facet)
      expect(values.length, facet).toBeGreaterThan(0)
      expect(fromFile.valuesOf(facet).sort()).toEqual([...values].sort())
      for (const value of values)
        expect([...fromFile.postingsFor(facet, value)!]).toEqual([...fromJson.postingsFor(facet, value)!])
    }
  })

  it('hands out each list long enough for a kept bitset as one object, so its bitset is made once', async () => {
    const index = JobIndex.fromFile(readJobIndexFile(await read(snapshotPaths.jobIndexBinary), 'jobs.bin'))
    const lists = FACETS.flatMap((facet) => index.valuesOf(facet).map((value) => [facet, value] as const))
    const long = lists.filter(([facet, value]) => index.bitsets.keepsBitsFor(index.postingsFor(facet, value)!))
    const short = lists.filter(([facet, value]) => !index.bitsets.keepsBitsFor(index.postingsFor(facet, value)!))
    expect(long.length).toBeGreaterThan(0)
    expect(short.length).toBeGreaterThan(0)
    for (const [facet, value] of long) {
      const list = index.postingsFor(facet, value)!
      expect(index.postingsFor(facet, value.toUpperCase())).toBe(list)
      expect(index.bitsets.bitsOf(index.postingsFor(facet, value)!)).toBe(index.bitsets.bitsOf(list))
    }
    for (const [facet, value] of short) expect(index.bitsets.bitsOf(index.postingsFor(facet, value)!)).toBeUndefined()
  })

  it('holds what a server would derive at load, derived once by the build (a file without it loads the same)', async () => {
    const file = readJobIndexFile(await read(snapshotPaths.jobIndexBinary), 'jobs.bin')
    expect(file.derived).toBeDefined()
    const stored = JobIndex.fromFile(file)
    const derivedAtLoad = JobIndex.fromFile({ ...file, derived: undefined })
    expect([...stored.salaryRank]).toEqual([...derivedAtLoad.salaryRank])
    expect(stored.bySalary).toEqual(derivedAtLoad.bySalary)
    expect(stored.salaryLowOrder()).toEqual(derivedAtLoad.salaryLowOrder())
    const expiries = [...file.expiresAt].filter(Number.isFinite).sort((a, b) => a - b)
    expect(expiries.length).toBeGreaterThan(10)
    for (const t of [...expiries, -Infinity, Infinity]) {
      for (const now of [t - 1, t, t + 1]) expect(stored.expiredCount(now)).toBe(derivedAtLoad.expiredCount(now))
    }
    for (const slug of derivedAtLoad.slugsInOrder()) {
      expect(stored.positionOf(slug)).toBe(derivedAtLoad.positionOf(slug))
      expect(stored.positionOf(`${slug}x`)).toBeUndefined()
    }
  })

  it('is what the server loads, and a changed byte makes it refuse the snapshot (last: it damages the fixture)', async () => {
    const loaded = await loadSnapshot(snapshotDir, createFileCache(0))
    loaded.close()
    // The server reads the numeric part and the text into buffers of their own: the same index as the whole file gives.
    const whole = JobIndex.fromFile(readJobIndexFile(await read(snapshotPaths.jobIndexBinary), 'jobs.bin'))
    for (const column of ['postedAt', 'expiresAt', 'salaryLow', 'salaryHigh', 'salaryOrder', 'salaryRank'] as const)
      expect([...loaded.jobs[column]], column).toEqual([...whole[column]])
    for (let p = 0; p < whole.size; p++) {
      expect([loaded.jobs.hashAt(p), loaded.jobs.idAt(p)]).toEqual([whole.hashAt(p), whole.idAt(p)])
      for (const facet of VALUE_FACETS) expect(loaded.jobs.valueAt(facet, p)).toBe(whole.valueAt(facet, p))
    }
    for (const slug of whole.slugsInOrder()) expect(loaded.jobs.positionOf(slug)).toBe(whole.positionOf(slug))
    const file = path.join(snapshotDir, snapshotPaths.jobIndexBinary)
    const original = await readFile(file)
    // A byte of the text, of the numeric part, of the head: each refused by the hash, however it reads.
    for (const at of [original.length - 3, Math.floor(original.length / 3), 20]) {
      const bytes = Buffer.from(original)
      bytes[at] = bytes[at]! ^ 1
      await writeFile(file, bytes)
      await expect(loadSnapshot(snapshotDir, createFileCache(0)), `byte ${at}`).rejects.toThrow(
        /jobs\.bin does not match the hash/,
      )
    }
  })
})
