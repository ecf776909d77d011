/**
 * The one-entry-per-line layouts of the files a server loads on a hot swap
 * (core/snapshot.ts): plain JSON to any reader, and read slice by slice by the
 * runtime so a swap never stalls requests for the whole load. What is read in
 * slices must equal what JSON.parse reads whole, whatever the strings hold;
 * another layout (an older build) must be recognised and parsed whole.
 */
import { readFile, realpath, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { buildSnapshot } from '../../build/index.ts'
import {
  arrayInSlices,
  type IndexedCompany,
  type IndexedJob,
  indexFileHash,
  jsonArrayByLine,
  readJobIndexInSlices,
  readManifestInSlices,
  serializeJobIndex,
  serializeManifest,
  SNAPSHOT_FORMAT,
  SnapshotJobIndex,
  type SnapshotManifest,
  snapshotPaths,
} from '../../core/index.ts'
import { CompanyTable, createFileCache, JobIndex, type LoadedSnapshot, loadSnapshot } from '../../runtime/index.ts'
import { FIXTURE_NOW, tempDir } from '../support/fixtures.ts'

/** Strings that would break a naive line or bracket splitter if they were not escaped. */
const AWKWARD = [
  'plain',
  'line\nbreak',
  'ends with ]}\n',
  '  "files": {\n }',
  'comma,\n',
  'ünïcødé 职位 🚀',
  '\u2028\u2029',
  '\\',
  '"quoted"',
  '',
]

function job(i: number): IndexedJob {
  return {
    id: `id-${i}`,
    slug: `job-${i}`,
    company_id: AWKWARD[i % AWKWARD.length]!,
    posted_at: 1_700_000_000_000 - i,
    ...(i % 3 === 0 ? { expires_at: 1_800_000_000_000 + i } : {}),
    category: 'engineering',
    work_arrangement: 'remote',
    tags: [AWKWARD[(i + 1) % AWKWARD.length]!, 'x'],
    places: ['c:DE'],
    ...(i % 2 === 0 ? { salary_low: 50_000 + i, salary_high: 90_000 + i } : {}),
    hash: `h${i}`,
  }
}

const collect = <T>(slices: Iterable<T[]>) => [...slices].flat()

describe('index/jobs.json, one job per line', () => {
  for (const count of [0, 1, 2, 7, 1000, 2501]) {
    it(`reads ${count} jobs in slices exactly as JSON.parse reads them whole`, () => {
      const index: SnapshotJobIndex = {
        jobs: Array.from({ length: count }, (_, i) => job(i)),
        salary_order: Array.from({ length: count }, (_, i) => count - 1 - i),
      }
      const bytes = Buffer.from(serializeJobIndex(index))
      expect(JSON.parse(bytes.toString('utf8'))).toEqual(index)
      for (const perSlice of [1, 3, 1000]) {
        const sliced = readJobIndexInSlices(bytes, perSlice)!
        expect(sliced).toBeDefined()
        expect(sliced.salaryOrder).toEqual(index.salary_order)
        const slices = [...sliced.slices]
        expect(slices.flat()).toEqual(index.jobs)
        expect(slices.length).toBe(Math.ceil(count / perSlice))
      }
    })
  }

  it('recognises the single-line layout of older builds as another layout', () => {
    const index: SnapshotJobIndex = { jobs: [job(1), job(2)], salary_order: [1, 0] }
    expect(readJobIndexInSlices(Buffer.from(JSON.stringify(index)))).toBeUndefined()
    expect(
      readJobIndexInSlices(Buffer.from(JSON.stringify({ salary_order: [1, 0], jobs: index.jobs }))),
    ).toBeUndefined()
    expect(readJobIndexInSlices(Buffer.from(''))).toBeUndefined()
  })

  it('fails loudly on a job line that is not JSON, rather than skipping it', () => {
    const bytes = Buffer.from(
      serializeJobIndex({ jobs: [job(1), job(2), job(3)], salary_order: [0, 1, 2] }).replace(
        '"id":"id-2"',
        '"id":id-2',
      ),
    )
    expect(() => collect(readJobIndexInSlices(bytes, 1)!.slices)).toThrow(SyntaxError)
  })
})

describe('index/companies.json, one company per line', () => {
  it('reads any array in slices exactly as JSON.parse reads it whole', () => {
    for (const count of [0, 1, 5, 1234]) {
      const items = Array.from({ length: count }, (_, i) => ({
        id: i,
        name: AWKWARD[i % AWKWARD.length],
        nested: { list: [i, AWKWARD[0]] },
      }))
      const bytes = Buffer.from(jsonArrayByLine(items))
      expect(JSON.parse(bytes.toString('utf8'))).toEqual(items)
      expect(collect(arrayInSlices(bytes, 0, bytes.length - 1, 100)!)).toEqual(items)
    }
    expect(arrayInSlices(Buffer.from(JSON.stringify([{ a: 1 }, { a: 2 }])))).toBeUndefined()
  })
})

describe('manifest.json, one file hash per line', () => {
  const manifest = (files: Record<string, string>): SnapshotManifest => ({
    format: SNAPSHOT_FORMAT,
    snapshot_id: '20261123T000000000Z-abcdef12',
    built_at: '2026-11-23T00:00:00.000Z',
    site_url: 'https://jobsnap.example',
    rates_as_of: '2026-11-01',
    counts: { records_jobs: 3, live_jobs: 2, closed_jobs: 1, expired_jobs: 0, companies: 1 },
    v1_limits: [25, 100],
    files,
    job_files: { count: 0, sha256: 'x' },
    index_hashes: { [snapshotPaths.jobIndex]: 'x' },
    exports: [],
  })

  it('reads the head whole and the file map in slices, equal to JSON.parse', () => {
    const files: Record<string, string> = {}
    for (let i = 0; i < 12_345; i++) files[`v2/jobs/${AWKWARD[i % AWKWARD.length]}-${i}.json`] = `hash-${i}`
    const written = manifest(files)
    const bytes = Buffer.from(serializeManifest(written))
    const sliced = readManifestInSlices(bytes, 1000)!
    expect(sliced).toBeDefined()
    const { files: _files, ...head } = written
    expect(sliced.head).toEqual({ ...head, files: {} })
    const read = Object.assign({}, ...sliced.files) as Record<string, string>
    expect(read).toEqual(files)
    expect(Object.keys(read)).toEqual(Object.keys(files))
  })

  it('recognises a compact or empty file map as another layout', () => {
    expect(readManifestInSlices(Buffer.from(JSON.stringify(manifest({ 'a.json': 'h' }))))).toBeUndefined()
    expect(readManifestInSlices(Buffer.from(serializeManifest(manifest({}))))).toBeUndefined()
  })
})

describe('a server loading a real snapshot in slices', () => {
  const roots: string[] = []
  afterAll(async () => {
    for (const root of roots) await rm(root, { recursive: true, force: true })
  })

  it('builds the same index as a whole parse, and still takes the single-line layout of an older build', async () => {
    const root = await tempDir('line-layout')
    roots.push(root)
    const distDir = path.join(root, 'dist')
    await buildSnapshot({
      dataDir: path.resolve('data'),
      distDir,
      siteUrl: 'https://jobsnap.example',
      now: FIXTURE_NOW,
      progress: { step() {}, log() {}, done() {} },
      // index/jobs.json as older builds wrote it: how a server loads such a snapshot is tested here.
      legacyJobIndex: true,
    })
    const dir = await realpath(path.join(distDir, 'current'))
    const jobsBytes = await readFile(path.join(dir, snapshotPaths.jobIndex))
    expect(readJobIndexInSlices(jobsBytes), 'the build writes the sliced layout').toBeDefined()
    const whole = SnapshotJobIndex.parse(JSON.parse(jobsBytes.toString('utf8')))
    const expected = JobIndex.from(whole)

    const sameIndex = (loaded: JobIndex) => {
      expect(loaded.size).toBe(whole.jobs.length)
      for (const [p, job] of whole.jobs.entries()) {
        expect(loaded.hashAt(p)).toBe(job.hash)
        expect([
          loaded.valueAt('company', p),
          loaded.valueAt('category', p),
          loaded.valueAt('level', p),
          loaded.valueAt('work_arrangement', p),
        ]).toEqual([job.company_id, job.category, job.level, job.work_arrangement])
        expect(loaded.positionOf(job.slug)).toBe(p)
      }
      expect([...loaded.salaryOrder]).toEqual([...expected.salaryOrder])
      expect([...loaded.bySalary.salaryLow]).toEqual([...expected.bySalary.salaryLow])
      for (const [facet, value] of [
        ['category', 'engineering'],
        ['schedule', '4_day_week'],
        ['place', 'c:DE'],
        ['company', whole.jobs[0]!.company_id],
      ] as const) {
        expect([...(loaded.postingsFor(facet, value) ?? [])], `${facet}=${value}`).toEqual([
          ...(expected.postingsFor(facet, value) ?? []),
        ])
      }
      for (const j of whole.jobs.slice(0, 50)) expect(loaded.positionOf(j.slug)).toBe(expected.positionOf(j.slug))
    }
    // From index/jobs.bin first, then as a snapshot built before it existed: from index/jobs.json, in slices.
    sameIndex((await loadSnapshot(dir, createFileCache(0))).jobs)
    await rm(path.join(dir, snapshotPaths.jobIndexBinary))
    const withBinary = JSON.parse(await readFile(path.join(dir, snapshotPaths.manifest), 'utf8')) as SnapshotManifest
    delete withBinary.index_hashes![snapshotPaths.jobIndexBinary]
    await writeFile(path.join(dir, snapshotPaths.manifest), serializeManifest(withBinary))
    const sliced = await loadSnapshot(dir, createFileCache(0))
    sameIndex(sliced.jobs)
    const companiesWhole = JSON.parse(await readFile(path.join(dir, snapshotPaths.companies), 'utf8')) as unknown[]
    const everyCompany = (table: LoadedSnapshot['companies']) =>
      Array.from({ length: table.size }, (_, i) => table.company(i))
    expect(everyCompany(sliced.companies)).toEqual(companiesWhole)
    // The table's own fields come from index/company-columns.json: the same as from parsing every company.
    const tableFields = (table: LoadedSnapshot['companies']) =>
      Array.from({ length: table.size }, (_, i) => ({
        id: table.id(i),
        slug: table.slug(i),
        name: table.name(i),
        country: table.country(i),
        schedule_type: table.scheduleType(i),
        remote_level: table.remoteLevel(i),
        hires_worldwide: table.hiresWorldwide(i),
        work_life_score: table.workLifeScore(i),
        hours_full_time: table.hoursFullTime(i),
        terms: table.searchTerms(i),
        by_slug: table.indexOfSlug(table.slug(i)),
      }))
    expect(sliced.manifest.index_hashes?.[snapshotPaths.companyColumns]).toBeDefined()
    const fromParse = CompanyTable.fromCompanies(companiesWhole as IndexedCompany[])
    expect(tableFields(sliced.companies)).toEqual(tableFields(fromParse))
    expect(tableFields(sliced.companies).some((row) => row.work_life_score === undefined)).toBe(true)
    const columnsFile = path.join(dir, snapshotPaths.companyColumns)
    const columnsText = await readFile(columnsFile, 'utf8')
    const withoutColumns = JSON.parse(
      await readFile(path.join(dir, snapshotPaths.manifest), 'utf8'),
    ) as SnapshotManifest
    // A column one company short, with its hash recorded to match: refused, naming the file and the column.
    const shortColumn = columnsText.replace(/\n\["[^"]*",/, '\n[')
    await writeFile(columnsFile, shortColumn)
    await writeFile(
      path.join(dir, snapshotPaths.manifest),
      serializeManifest({
        ...withoutColumns,
        index_hashes: { ...withoutColumns.index_hashes, [snapshotPaths.companyColumns]: indexFileHash(shortColumn) },
      }),
    )
    await expect(loadSnapshot(dir, createFileCache(0))).rejects.toThrow(
      /company-columns\.json is invalid: column id holds/,
    )
    // Changed after the build, the hash left as it was: refused.
    await writeFile(path.join(dir, snapshotPaths.manifest), serializeManifest(withoutColumns))
    await expect(loadSnapshot(dir, createFileCache(0))).rejects.toThrow(/company-columns\.json does not match the hash/)
    // A snapshot whose manifest records no columns file: the companies are parsed, to the same table.
    await writeFile(columnsFile, columnsText)
    delete withoutColumns.index_hashes![snapshotPaths.companyColumns]
    await writeFile(path.join(dir, snapshotPaths.manifest), serializeManifest(withoutColumns))
    expect(tableFields((await loadSnapshot(dir, createFileCache(0))).companies)).toEqual(tableFields(fromParse))
    // Read in slices, the file map is the one on disk: the per-job files are not in it (index/job-files.txt).
    const onDisk = JSON.parse(await readFile(path.join(dir, snapshotPaths.manifest), 'utf8')) as SnapshotManifest
    expect(Object.keys(onDisk.files).length).toBeGreaterThan(10)
    expect(Object.keys(onDisk.files).filter((file) => file.startsWith('v2/jobs/'))).toEqual([])
    expect(Object.fromEntries(sliced.files.entries())).toEqual(onDisk.files)
    expect(sliced.files.size).toBe(Object.keys(onDisk.files).length)

    // Broken slices are refused with the file named, whether or not the hash was updated to match.
    const manifestBytes = await readFile(path.join(dir, snapshotPaths.manifest), 'utf8')
    const brokenLine = jobsBytes.toString('utf8').replace(/\n\{"id":/, '\n{"id":,')
    await writeFile(path.join(dir, snapshotPaths.jobIndex), brokenLine)
    const rehashed = JSON.parse(manifestBytes) as SnapshotManifest
    rehashed.index_hashes![snapshotPaths.jobIndex] = indexFileHash(brokenLine)
    await writeFile(path.join(dir, snapshotPaths.manifest), serializeManifest(rehashed))
    await expect(loadSnapshot(dir, createFileCache(0))).rejects.toThrow(/index\/jobs\.json is not JSON/)
    await writeFile(path.join(dir, snapshotPaths.jobIndex), jobsBytes)
    const brokenManifest = manifestBytes.replace(/\n {2}"v1\/25\/([^"]+)": "/, '\n  "v1/25/$1" "')
    expect(brokenManifest).not.toBe(manifestBytes)
    await writeFile(path.join(dir, snapshotPaths.manifest), brokenManifest)
    await expect(loadSnapshot(dir, createFileCache(0))).rejects.toThrow(/manifest\.json is not JSON/)
    await writeFile(path.join(dir, snapshotPaths.manifest), manifestBytes)
    expect((await loadSnapshot(dir, createFileCache(0))).jobs.size).toBe(whole.jobs.length)

    // The same snapshot rewritten the way builds before the line layout wrote it: single-line JSON files.
    const manifestPath = path.join(dir, snapshotPaths.manifest)
    const manifest = JSON.parse(await readFile(manifestPath, 'utf8')) as SnapshotManifest
    const oldJobs = JSON.stringify(whole)
    const oldCompanies = JSON.stringify(companiesWhole)
    await writeFile(path.join(dir, snapshotPaths.jobIndex), oldJobs)
    await writeFile(path.join(dir, snapshotPaths.companies), oldCompanies)
    manifest.index_hashes![snapshotPaths.jobIndex] = indexFileHash(oldJobs)
    manifest.index_hashes![snapshotPaths.companies] = indexFileHash(oldCompanies)
    await writeFile(manifestPath, JSON.stringify(manifest))
    const old = await loadSnapshot(dir, createFileCache(0))
    sameIndex(old.jobs)
    expect(everyCompany(old.companies)).toEqual(companiesWhole)
    // The same manifest, read whole this time; only the two rewritten files' hashes differ.
    expect({ ...old.manifest, index_hashes: {} }).toEqual({ ...sliced.manifest, index_hashes: {} })
  })
})
