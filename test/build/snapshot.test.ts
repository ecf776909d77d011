/**
 * The snapshot on disk (core/snapshot.ts): only live jobs (docs/api.md:
 * Live), a manifest whose hashes match the bytes, precomputed v1
 * pages, the precompressed OpenAPI document, and atomic publishing (docs/data.md): a build killed half way leaves the published snapshot alone and
 * the next build sweeps its leftovers.
 */
import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import { readdir, readFile, readlink, realpath, rm } from 'node:fs/promises'
import path from 'node:path'
import { brotliDecompressSync, gunzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type BuildResult, buildSnapshot } from '../../build/index.ts'
import {
  eachJobFile,
  type DatasetCompany,
  type DatasetJob,
  SnapshotCompanies,
  SnapshotManifest,
  snapshotPaths,
  V1ListResponse,
  V2Job,
} from '../../core/index.ts'
import { createFileCache, loadSnapshot } from '../../runtime/index.ts'
import { FIXTURE_NOW, tempDir, testUuid, writeDatasetFiles } from '../support/fixtures.ts'
import { readSnapshotJobIndex } from '../../support/job-index.ts'
import { REPO_ROOT, runCli } from '../../support/processes.ts'

const NOW = FIXTURE_NOW
const HOUR = 3_600_000
const iso = (ms: number) => new Date(ms).toISOString()
const SITE = 'https://jobsnap.example'

const COMPANIES: DatasetCompany[] = [1, 2].map((n) => ({
  id: testUuid(n),
  slug: `company-${n}`,
  name: `Company ${n}`,
  url: `${SITE}/companies/company-${n}`,
  schedule_type: '4_day_week',
  remote_level: 'fully_remote',
  hires_worldwide: true,
  benefits: ['Learning budget'],
}))

function job(slug: string, n: number, overrides: Partial<DatasetJob> = {}): DatasetJob {
  return {
    id: testUuid(1000 + n),
    slug,
    status: 'live',
    company_id: testUuid(1 + (n % 2)),
    title: `Engineer ${n}`,
    url: `${SITE}/jobs/${slug}`,
    work_arrangement: 'remote',
    remote_allowed: [{ region: 'Worldwide' }],
    // Ten jobs share each hour, so ties are broken by id.
    posted_at: iso(NOW.getTime() - 24 * HOUR - Math.floor(n / 10) * HOUR),
    ...overrides,
  }
}

/** Newest of all, so that any of them leaking would show on page 1. */
const EXCLUDED: DatasetJob[] = [
  job('closed-open-ended', 1, { status: 'closed', posted_at: iso(NOW.getTime() - HOUR), title: 'Zeppelin pilot' }),
  job('closed-future-expiry', 2, {
    status: 'closed',
    posted_at: iso(NOW.getTime() - HOUR),
    expires_at: iso(NOW.getTime() + 30 * 24 * HOUR),
  }),
  job('expired-an-hour-ago', 3, {
    posted_at: iso(NOW.getTime() - 2 * HOUR),
    expires_at: iso(NOW.getTime() - HOUR),
    title: 'Zeppelin navigator',
  }),
  job('expires-exactly-now', 4, { posted_at: iso(NOW.getTime() - 2 * HOUR), expires_at: NOW.toISOString() }),
]
const KEPT_WITH_EXPIRY = job('expires-next-minute', 5, {
  posted_at: iso(NOW.getTime() - 3 * HOUR),
  expires_at: iso(NOW.getTime() + 60_000),
})
const FILLER = Array.from({ length: 129 }, (_, i) => job(`filler-${i}`, 100 + i))
const LIVE = [KEPT_WITH_EXPIRY, ...FILLER]
const ALL_JOBS = [
  ...EXCLUDED.slice(0, 2),
  ...FILLER.slice(0, 60),
  ...EXCLUDED.slice(2),
  KEPT_WITH_EXPIRY,
  ...FILLER.slice(60),
]

/** Newest first, ties by id: computed here, not taken from the build. */
const EXPECTED_ORDER = [...LIVE]
  .sort((a, b) => Date.parse(b.posted_at) - Date.parse(a.posted_at) || (a.id < b.id ? -1 : 1))
  .map((j) => j.slug)

function sha22(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('base64url').slice(0, 22)
}

async function filesUnder(dir: string, prefix = ''): Promise<string[]> {
  const out: string[] = []
  for (const entry of await readdir(path.join(dir, prefix), { withFileTypes: true })) {
    const rel = prefix ? `${prefix}/${entry.name}` : entry.name
    if (entry.isDirectory()) out.push(...(await filesUnder(dir, rel)))
    else out.push(rel)
  }
  return out
}

async function writeSmallDataset(dataDir: string): Promise<void> {
  await writeDatasetFiles(dataDir, {
    'rates.json': { as_of: '2026-11-01', base: 'USD', usd_per_unit: { USD: 1 } },
    'companies.ndjson': COMPANIES,
    'jobs.ndjson': ALL_JOBS,
  })
}

describe('a built snapshot', () => {
  let root: string
  let distDir: string
  let build: BuildResult
  let dir: string

  beforeAll(async () => {
    root = await tempDir('snapshot')
    const dataDir = path.join(root, 'data')
    distDir = path.join(root, 'dist')
    await writeSmallDataset(dataDir)
    build = await buildSnapshot({ dataDir, distDir, siteUrl: SITE, now: NOW })
    dir = await realpath(path.join(distDir, 'current'))
  })
  afterAll(async () => {
    await rm(root, { recursive: true, force: true })
  })

  it('has the live jobs only, as v2 files', async () => {
    for (const j of EXCLUDED) expect(existsSync(path.join(dir, 'v2/jobs', `${j.slug}.json`)), j.slug).toBe(false)
    const v2Files = (await readdir(path.join(dir, 'v2/jobs'))).filter((f) => f.endsWith('.json'))
    expect(v2Files.map((f) => f.replace(/\.json$/, '')).sort()).toEqual(LIVE.map((j) => j.slug).sort())
    const kept = V2Job.parse(JSON.parse(await readFile(path.join(dir, 'v2/jobs/expires-next-minute.json'), 'utf8')))
    expect(kept.expires_at).toBe('2026-11-22T12:01:00Z')
  })

  it('leaves closed and expired jobs out of the v1 pages, the index, the search terms and the counts', async () => {
    const index = await readSnapshotJobIndex(dir)
    expect(index.jobs.map((j) => j.slug)).toEqual(EXPECTED_ORDER)
    expect(index.salary_order).toHaveLength(LIVE.length)

    const v1Slugs: string[] = []
    for (let page = 1; existsSync(path.join(dir, `v1/100/${page}.json`)); page++) {
      const body = V1ListResponse.parse(JSON.parse(await readFile(path.join(dir, `v1/100/${page}.json`), 'utf8')))
      v1Slugs.push(...body.jobs.map((j) => j.slug))
    }
    expect(v1Slugs).toEqual(EXPECTED_ORDER)

    const terms = JSON.parse(await readFile(path.join(dir, 'index/terms.json'), 'utf8')) as { terms: string[] }
    expect(terms.terms).toContain('engineer')
    expect(terms.terms).not.toContain('zeppelin')

    const companies = SnapshotCompanies.parse(
      JSON.parse(await readFile(path.join(dir, 'index/companies.json'), 'utf8')),
    )
    const liveByCompany = (id: string) => LIVE.filter((j) => j.company_id === id).length
    expect(companies.map((c) => [c.slug, c.live_jobs])).toEqual(COMPANIES.map((c) => [c.slug, liveByCompany(c.id)]))

    expect(build.manifest.counts).toEqual({
      records_jobs: ALL_JOBS.length,
      live_jobs: LIVE.length,
      closed_jobs: 2,
      expired_jobs: 2,
      companies: 2,
    })
  })

  it('writes a manifest with id, built_at, counts and the hash of every public file', async () => {
    const manifest = SnapshotManifest.parse(JSON.parse(await readFile(path.join(dir, 'manifest.json'), 'utf8')))
    expect(manifest).toEqual(build.manifest)
    expect(manifest.snapshot_id).toBe(build.snapshotId)
    expect(path.basename(dir)).toBe(manifest.snapshot_id)
    expect(await readlink(path.join(distDir, 'current'))).toBe(path.join('snapshots', manifest.snapshot_id))
    expect(manifest.built_at).toBe('2026-11-22T12:00:00.000Z')
    expect(manifest.site_url).toBe(SITE)
    expect(manifest.rates_as_of).toBe('2026-11-01')
    expect(manifest.counts.live_jobs).toBe(130)

    const onDisk = await filesUnder(dir)
    const publicFiles = onDisk.filter(
      (f) => (/^(v1\/|v2\/|openapi\.yaml$)/.test(f) && !/\.(br|gz)$/.test(f)) || f.startsWith('exports/'),
    )
    // The per-job files are listed apart, in index/job-files.txt (newest first), the rest in `files`.
    const jobFiles = new Map<string, string>()
    const listed = eachJobFile(
      await readFile(path.join(dir, snapshotPaths.jobFiles)),
      manifest.job_files,
      (file, hash) => jobFiles.set(file, hash),
    )
    expect(listed).toBe(true)
    expect(manifest.job_files.count).toBe(LIVE.length)
    expect([...jobFiles.keys()]).toEqual(EXPECTED_ORDER.map((slug) => snapshotPaths.v2Job(slug)))
    expect(Object.keys(manifest.files).some((f) => f.startsWith('v2/jobs/'))).toBe(false)
    expect([...Object.keys(manifest.files), ...jobFiles.keys()].sort()).toEqual(publicFiles.sort())
    expect(Object.fromEntries(build.files)).toEqual({ ...manifest.files, ...Object.fromEntries(jobFiles) })
    // v2 files, 6 + 2 v1 pages, openapi.yaml, the three bulk exports.
    expect(publicFiles).toHaveLength(130 + 6 + 2 + 1 + 3)
    expect(manifest.exports.map((file) => file.name)).toEqual(['jobs.ndjson.gz', 'companies.ndjson.gz', 'jobs.parquet'])
    expect(Object.keys(manifest.files).some((f) => f.startsWith('index/') || f === 'manifest.json')).toBe(false)
    // The job index is index/jobs.bin alone: no index/jobs.json (older builds' copy) on disk or in the hashes.
    expect(Object.keys(manifest.index_hashes ?? {})).toContain(snapshotPaths.jobIndexBinary)
    expect(Object.keys(manifest.index_hashes ?? {})).not.toContain(snapshotPaths.jobIndex)
    expect(onDisk).not.toContain(snapshotPaths.jobIndex)
    for (const file of publicFiles) {
      expect(build.files.get(file), file).toBe(sha22(await readFile(path.join(dir, file))))
    }
    // A list that is not the one the manifest describes is refused whole.
    const text = await readFile(path.join(dir, snapshotPaths.jobFiles), 'utf8')
    const refused = (damaged: string, listedAs = manifest.job_files) => {
      let called = 0
      const ok = eachJobFile(Buffer.from(damaged), listedAs, () => called++)
      return { ok, called }
    }
    expect(refused(text.replace(/\t\S/, '\tX'))).toEqual({ ok: false, called: 0 })
    expect(refused(text, { ...manifest.job_files, count: LIVE.length + 1 }).ok).toBe(false)
    expect(manifest.files['openapi.yaml']).toMatch(/^[A-Za-z0-9_-]{22}$/)
  })

  it('precomputes v1 pages for limits 25 and 100 with page, total and has_more', async () => {
    expect(build.manifest.v1_limits).toEqual([25, 100])
    for (const limit of [25, 100]) {
      const pages = Math.ceil(LIVE.length / limit)
      expect(pages).toBe(limit === 25 ? 6 : 2)
      const slugs: string[] = []
      for (let page = 1; page <= pages; page++) {
        const body = V1ListResponse.parse(
          JSON.parse(await readFile(path.join(dir, `v1/${limit}/${page}.json`), 'utf8')),
        )
        expect(body.page).toBe(page)
        expect(body.total).toBe(130)
        expect(body.has_more).toBe(page < pages)
        expect(body.jobs).toHaveLength(page < pages ? limit : LIVE.length - (pages - 1) * limit)
        expect(body.usage).toContain(SITE)
        slugs.push(...body.jobs.map((j) => j.slug))
      }
      expect(slugs).toEqual(EXPECTED_ORDER)
      expect(existsSync(path.join(dir, `v1/${limit}/${pages + 1}.json`))).toBe(false)
    }
  })

  it('precompresses only the OpenAPI document: its .br and .gz decompress to the same bytes; job files and v1 pages have no siblings', async () => {
    const publicFiles = [...build.files.keys()]
    expect(publicFiles.length).toBeGreaterThan(100)
    for (const file of publicFiles) {
      const siblings = [`${file}.br`, `${file}.gz`].map((sibling) => existsSync(path.join(dir, sibling)))
      if (file !== snapshotPaths.openapi) {
        expect(siblings, file).toEqual([false, false])
        continue
      }
      const bytes = await readFile(path.join(dir, file))
      expect(brotliDecompressSync(await readFile(path.join(dir, `${file}.br`))).equals(bytes), `${file}.br`).toBe(true)
      expect(gunzipSync(await readFile(path.join(dir, `${file}.gz`))).equals(bytes), `${file}.gz`).toBe(true)
    }
  })
})

describe('atomic publish', () => {
  let root: string
  beforeAll(async () => {
    root = await tempDir('publish')
  })
  afterAll(async () => {
    await rm(root, { recursive: true, force: true })
  })

  /** The pid a staging folder is named after (`.staging-<snapshot id>-<pid>`). */
  const stagingPid = (name: string) => Number(name.split('-').at(-1))

  it('a build killed half way leaves current on the previous snapshot; the next build sweeps it and publishes', {
    timeout: 90_000,
  }, async () => {
    const smallDir = path.join(root, 'small')
    const bigDir = path.join(root, 'big')
    const distDir = path.join(root, 'dist')
    await writeSmallDataset(smallDir)
    const a = await buildSnapshot({ dataDir: smallDir, distDir, siteUrl: SITE, now: NOW })
    const aDir = path.join(distDir, 'snapshots', a.snapshotId)
    const aOpenApi = await readFile(path.join(aDir, 'openapi.yaml'))

    const generated = await runCli([
      'generate',
      '--jobs',
      '30000',
      '--companies',
      '500',
      '--seed',
      '3',
      '--out',
      bigDir,
    ])
    expect(generated.code, generated.stderr).toBe(0)

    // The second build, as a real child process: npx -> tsx -> node, in a process group of its own.
    const child = spawn('npx', ['tsx', 'cli.ts', 'build', '--data', bigDir, '--out', distDir, '--quiet'], {
      cwd: REPO_ROOT,
      detached: true,
      stdio: 'ignore',
    })
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.on('exit', (code, signal) => resolve({ code, signal })),
    )
    let exitedEarly: { code: number | null; signal: NodeJS.Signals | null } | undefined
    void exited.then((result) => (exitedEarly = result))
    let staging: string | undefined
    let writtenAtKill = 0
    try {
      const deadline = Date.now() + 45_000
      while (Date.now() < deadline && exitedEarly === undefined) {
        const entries = await readdir(path.join(distDir, 'snapshots')).catch(() => [] as string[])
        // The child's staging folder: named after its pid, never this process's (a folder this process left
        // would make the kill below a SIGKILL of the test runner itself).
        staging = entries.find((e) => e.startsWith('.staging-') && stagingPid(e) !== process.pid)
        if (staging) {
          writtenAtKill = (
            await readdir(path.join(distDir, 'snapshots', staging, 'v2/jobs')).catch(() => [] as string[])
          ).length
          if (writtenAtKill >= 3000) break
        }
        // Readers during the build always find snapshot A.
        expect(await readlink(path.join(distDir, 'current'))).toBe(path.join('snapshots', a.snapshotId))
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
      expect(exitedEarly, 'the big build must still be running when it is killed').toBeUndefined()
      expect(writtenAtKill).toBeGreaterThanOrEqual(3000)
      // SIGKILL the process doing the work: the staging folder is named after its pid. Its parent
      // (tsx) reaps it and exits, so no zombie is left for the next build's liveness check.
      const pid = stagingPid(staging!)
      expect(pid > 1 && pid !== process.pid, `staging folder ${staging} names pid ${pid}`).toBe(true)
      process.kill(pid, 'SIGKILL')
      const result = await Promise.race([
        exited,
        new Promise<undefined>((resolve) => setTimeout(resolve, 10_000, undefined)),
      ])
      expect(result, 'the CLI exits once its build process is killed').toBeDefined()
      expect(result!.code === 0).toBe(false)
    } finally {
      // Whatever happened above, nothing of the group outlives the test.
      if (child.pid !== undefined && exitedEarly === undefined) {
        try {
          process.kill(-child.pid, 'SIGKILL')
        } catch {
          // already gone
        }
      }
    }

    // The dead build's staging folder is there, half-written (no manifest), and nothing else changed.
    const stagingDir = path.join(distDir, 'snapshots', staging!)
    expect(existsSync(stagingDir)).toBe(true)
    expect(existsSync(path.join(stagingDir, 'manifest.json'))).toBe(false)
    expect((await readdir(path.join(distDir, 'snapshots'))).sort()).toEqual([staging!, a.snapshotId].sort())
    expect(await readlink(path.join(distDir, 'current'))).toBe(path.join('snapshots', a.snapshotId))
    const currentDir = await realpath(path.join(distDir, 'current'))
    expect(currentDir).toBe(await realpath(aDir))
    expect(JSON.parse(await readFile(path.join(currentDir, 'manifest.json'), 'utf8'))).toEqual(a.manifest)
    expect((await readFile(path.join(currentDir, 'openapi.yaml'))).equals(aOpenApi)).toBe(true)
    const loaded = await loadSnapshot(currentDir, createFileCache(8 * 1024 * 1024))
    expect(loaded.id).toBe(a.snapshotId)
    expect(loaded.jobs.size).toBe(LIVE.length)
    const page = await loaded.readPublic('v1/25/1.json')
    expect(sha22(page!)).toBe(a.manifest.files['v1/25/1.json'])

    // The next build publishes and sweeps the dead staging folder.
    const b = await buildSnapshot({ dataDir: smallDir, distDir, siteUrl: SITE, now: new Date(NOW.getTime() + 60_000) })
    expect(b.snapshotId).not.toBe(a.snapshotId)
    expect(existsSync(stagingDir)).toBe(false)
    // Renamed out of sight at once (above), deleted in the background.
    await expect
      .poll(async () => (await readdir(path.join(distDir, 'snapshots'))).filter((e) => e.startsWith('.')), {
        timeout: 10_000,
      })
      .toEqual([])
    expect(await readlink(path.join(distDir, 'current'))).toBe(path.join('snapshots', b.snapshotId))
    const next = await loadSnapshot(await realpath(path.join(distDir, 'current')), createFileCache(8 * 1024 * 1024))
    expect(next.id).toBe(b.snapshotId)
    // One job expired between the two reference times.
    expect(next.manifest.counts.live_jobs).toBe(LIVE.length - 1)
  })

  it('rebuilding with the same reference time never leaves current without a snapshot', async () => {
    const dataDir = path.join(root, 'same-time')
    const distDir = path.join(root, 'same-time-dist')
    await writeSmallDataset(dataDir)
    const first = await buildSnapshot({ dataDir, distDir, siteUrl: SITE, now: NOW })

    // Readers poll `current` on every turn of the event loop while the second build publishes.
    const manifestPath = path.join(distDir, 'current', 'manifest.json')
    let checks = 0
    let missing = 0
    let polling = true
    const poll = () => {
      if (!polling) return
      checks++
      if (!existsSync(manifestPath)) missing++
      setImmediate(poll)
    }
    poll()
    let second: BuildResult
    try {
      second = await buildSnapshot({ dataDir, distDir, siteUrl: SITE, now: NOW })
    } finally {
      polling = false
    }
    expect(checks).toBeGreaterThan(100)
    expect(missing).toBe(0)
    // A running server reloads only when `current` points at a different folder, so a rebuild gets one.
    expect(second.snapshotDir).not.toBe(first.snapshotDir)
    expect(await realpath(path.join(distDir, 'current'))).toBe(await realpath(second.snapshotDir))
    expect(JSON.parse(await readFile(manifestPath, 'utf8'))).toEqual(second.manifest)
    // The first snapshot is kept for rollback, unchanged.
    expect(JSON.parse(await readFile(path.join(first.snapshotDir, 'manifest.json'), 'utf8'))).toEqual(first.manifest)
  })
})
