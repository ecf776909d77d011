/**
 * Bad data from the data team never reaches users. fast-check takes a valid
 * generated dataset, breaks some records in one of many ways (wrong types,
 * missing fields, bad enums, duplicate ids and slugs, unknown company,
 * unknown currency, min > max, invalid JSON lines, unknown fields, bad URLs,
 * slugs that would be paths, ...) and makes harmless changes to others
 * (closed, expired, unicode, HTML-only descriptions). Property: the build
 * either publishes a snapshot in which every v2 file is a valid V2Job, the
 * live records are exactly what was expected and no HTML survives, or it
 * throws DatasetInvalidError with at least one issue on the line of every
 * broken record, and `current` and the published snapshots are untouched.
 */
import { randomUUID } from 'node:crypto'
import { mkdir, readdir, readFile, readlink, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildSnapshot, createProgress, DatasetInvalidError, generateDataset } from '../../build/index.ts'
import { CURRENT_LINK, jobFilesThroughLayers, SNAPSHOTS_DIR, V2Job } from '../../core/index.ts'
import { FIXTURE_NOW, tempDir } from '../support/fixtures.ts'

type Json = Record<string, unknown>

const JOBS = 20
const COMPANIES = 5
const NOW = FIXTURE_NOW

let root: string
let distDir: string
let baseJobs: Json[]
let baseCompanies: Json[]
let ratesText: string
let runs = 0
let published = 0
let refused = 0
let brokenRecordsTried = 0

beforeAll(async () => {
  root = await tempDir('build-fuzz')
  const baseDir = path.join(root, 'base')
  distDir = path.join(root, 'dist')
  await generateDataset({ jobs: JOBS, companies: COMPANIES, seed: 17, outDir: baseDir })
  const lines = async (file: string) =>
    (await readFile(path.join(baseDir, file), 'utf8'))
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Json)
  baseJobs = await lines('jobs.ndjson')
  baseCompanies = await lines('companies.ndjson')
  ratesText = await readFile(path.join(baseDir, 'rates.json'), 'utf8')
  // A published snapshot that failed builds must leave alone.
  await buildSnapshot({
    dataDir: baseDir,
    distDir,
    siteUrl: 'https://jobsnap.example',
    now: NOW,
    progress: createProgress(process.stderr, true),
  })
})

afterAll(async () => {
  console.log(
    `[security] build fuzz: ${runs} datasets (${brokenRecordsTried} broken records), ${published} published, ${refused} refused with every broken record reported`,
  )
  await rm(root, { recursive: true, force: true })
})

/** One way to break a job record; each must yield an issue on that record's line. */
type Break =
  | { kind: 'wrong-type'; field: string; value: unknown }
  | { kind: 'missing'; field: string }
  | { kind: 'bad-enum'; field: string; value: string }
  | { kind: 'bad-value'; field: string; value: unknown }
  | { kind: 'duplicate-id' }
  | { kind: 'duplicate-slug' }
  | { kind: 'unknown-company' }
  | { kind: 'unknown-currency' }
  | { kind: 'salary-min-over-max' }
  | { kind: 'hours-min-over-max' }
  | { kind: 'expires-before-posted' }
  | { kind: 'unknown-field'; field: string }
  | { kind: 'invalid-json'; text: string }

/** Harmless edits: the record stays valid. */
type Edit = 'none' | 'closed' | 'expired' | 'unicode-title' | 'html-only-description' | 'drop-optional' | 'no-salary'

const breakArb: fc.Arbitrary<Break> = fc.oneof(
  fc.record({
    kind: fc.constant('wrong-type' as const),
    field: fc.constantFrom(
      'title',
      'posted_at',
      'work_arrangement',
      'status',
      'url',
      'id',
      'company_id',
      'skills',
      'office_locations',
    ),
    value: fc.oneof(fc.integer(), fc.boolean(), fc.constant(null), fc.constant({}), fc.constant([1, 2])),
  }),
  fc.record({
    kind: fc.constant('wrong-type' as const),
    field: fc.constantFrom('salary_min', 'salary_max', 'hours_per_week_min', 'hours_per_week_max'),
    value: fc.oneof(
      fc.integer({ min: 1, max: 40 }).map(String),
      fc.boolean(),
      fc.constant(null),
      fc.constant({}),
      fc.constant([1, 2]),
    ),
  }),
  fc.record({
    kind: fc.constant('missing' as const),
    field: fc.constantFrom('id', 'slug', 'status', 'company_id', 'title', 'url', 'work_arrangement', 'posted_at'),
  }),
  fc.record({
    kind: fc.constant('bad-enum' as const),
    field: fc.constantFrom('work_arrangement', 'contract_type', 'schedule_type', 'salary_period', 'status'),
    value: fc.constantFrom('moon', 'zero-hours', '3_day_week', 'week', 'draft', '', 'REMOTE', 'remote '),
  }),
  fc.oneof(
    fc.record({
      kind: fc.constant('bad-value' as const),
      field: fc.constant('slug'),
      value: fc.constantFrom('Has Spaces', '../../etc/passwd', 'a/b', 'UPPER', '', 'trailing-', 'a..b', 'x%2f'),
    }),
    fc.record({
      kind: fc.constant('bad-value' as const),
      field: fc.constant('url'),
      value: fc.constantFrom('javascript:alert(1)', 'ftp://x/y', 'not a url', '//evil', 'file:///etc/passwd'),
    }),
    fc.record({
      kind: fc.constant('bad-value' as const),
      field: fc.constant('id'),
      value: fc.constantFrom('not-a-uuid', '123', ''),
    }),
    fc.record({
      kind: fc.constant('bad-value' as const),
      field: fc.constant('posted_at'),
      value: fc.constantFrom('2026-13-45T00:00:00Z', 'yesterday', '2026-11-01', ''),
    }),
    fc.record({
      kind: fc.constant('bad-value' as const),
      field: fc.constant('title'),
      value: fc.constantFrom('', '   '),
    }),
    fc.record({
      kind: fc.constant('bad-value' as const),
      field: fc.constant('office_locations'),
      value: fc.constantFrom([{ country: 'Atlantis' }], [{}], [{ city: 'Paris', planet: 'Mars' }]),
    }),
    fc.record({
      kind: fc.constant('bad-value' as const),
      field: fc.constant('hours_per_week_min'),
      value: fc.constantFrom(0, -5, 81, 37.5),
    }),
    fc.record({
      kind: fc.constant('bad-value' as const),
      field: fc.constant('salary_currency'),
      value: fc.constantFrom('usd', 'US$', 'EURO'),
    }),
  ),
  fc.constantFrom<Break>(
    { kind: 'duplicate-id' },
    { kind: 'duplicate-slug' },
    { kind: 'unknown-company' },
    { kind: 'unknown-currency' },
    { kind: 'salary-min-over-max' },
    { kind: 'hours-min-over-max' },
    { kind: 'expires-before-posted' },
  ),
  fc.record({
    kind: fc.constant('unknown-field' as const),
    field: fc.constantFrom('salary', 'apply_url', 'description_markdown', '__proto__x'),
  }),
  fc.record({
    kind: fc.constant('invalid-json' as const),
    text: fc.constantFrom('{"id": ', '{not json}', 'undefined', '{"a":1}}', '\u0000', "{'single': 'quotes'}"),
  }),
)

const editArb = fc.constantFrom<Edit>(
  'none',
  'none',
  'closed',
  'expired',
  'unicode-title',
  'html-only-description',
  'drop-optional',
  'no-salary',
)

/** Applies a break to a copy of `job`; `unbrokenBefore` are earlier records that stay valid (for duplicates). Returns the NDJSON line. */
function breakRecord(job: Json, broken: Break, unbrokenBefore: Json[]): string {
  const copy: Json = structuredClone(job)
  switch (broken.kind) {
    case 'wrong-type':
      copy[broken.field] = broken.value
      break
    case 'missing':
      delete copy[broken.field]
      break
    case 'bad-enum':
    case 'bad-value':
      copy[broken.field] = broken.value
      break
    case 'duplicate-id':
      copy.id = unbrokenBefore[0]!.id
      break
    case 'duplicate-slug':
      copy.slug = unbrokenBefore[0]!.slug
      break
    case 'unknown-company':
      copy.company_id = randomUUID()
      break
    case 'unknown-currency':
      Object.assign(copy, {
        salary_min: 100_000_00,
        salary_max: 120_000_00,
        salary_currency: 'XYZ',
        salary_period: 'year',
      })
      break
    case 'salary-min-over-max':
      Object.assign(copy, {
        salary_min: 200_000_00,
        salary_max: 100_000_00,
        salary_currency: 'USD',
        salary_period: 'year',
      })
      break
    case 'hours-min-over-max':
      Object.assign(copy, { hours_per_week_min: 40, hours_per_week_max: 30 })
      break
    case 'expires-before-posted':
      Object.assign(copy, { posted_at: '2026-11-20T00:00:00Z', expires_at: '2026-11-01T00:00:00Z' })
      break
    case 'unknown-field':
      copy[broken.field] = 'x'
      break
    case 'invalid-json':
      return broken.text
  }
  return JSON.stringify(copy)
}

function editRecord(job: Json, edit: Edit): Json {
  const copy: Json = structuredClone(job)
  switch (edit) {
    case 'closed':
      copy.status = 'closed'
      break
    case 'expired':
      copy.expires_at = '2026-11-21T00:00:00Z'
      if (Date.parse(String(copy.posted_at)) > Date.parse('2026-11-21T00:00:00Z'))
        copy.posted_at = '2026-11-20T00:00:00Z'
      break
    case 'unicode-title':
      copy.title = `Ingénieur·e 工程师 🚀 ${'\u202e'}evil${'\u202c'} "quotes" \\ back`
      break
    case 'html-only-description':
      delete copy.description
      copy.description_html =
        '<p>Real text.</p><ul><li>one</li></ul><script>alert(1)</script><img src=x onerror=alert(2)><a href="javascript:alert(3)">x</a>'
      break
    case 'drop-optional':
      for (const field of [
        'category',
        'role',
        'level',
        'contract_type',
        'office_locations',
        'remote_allowed',
        'skills',
        'stack',
        'tools',
        'timezones',
        'description',
      ])
        delete copy[field]
      break
    case 'no-salary':
      for (const field of ['salary_min', 'salary_max', 'salary_currency', 'salary_period']) delete copy[field]
      break
    case 'none':
      break
  }
  return copy
}

/**
 * Where `current` points, the published snapshot folders, and any staging folders left behind.
 * Pruned snapshots (`.pruned-*`) are left out: an earlier build's `rm -rf` deletes them in the
 * background, so one may vanish while the build under test runs, whatever that build does.
 */
async function publishedState(): Promise<{ current: string; snapshots: string[]; staging: string[] }> {
  const entries = (await readdir(path.join(distDir, SNAPSHOTS_DIR))).sort()
  return {
    current: await readlink(path.join(distDir, CURRENT_LINK)),
    snapshots: entries.filter((e) => !e.startsWith('.')),
    staging: entries.filter((e) => e.startsWith('.') && !e.startsWith('.pruned-')),
  }
}

describe('build fuzzing', () => {
  it('publishes a valid snapshot or nothing, and reports every broken record', async () => {
    const plan = fc.record({
      // Which records of the base dataset, in which order.
      order: fc.shuffledSubarray([...baseJobs.keys()], { minLength: 12, maxLength: JOBS }),
      breaks: fc.oneof(
        { weight: 1, arbitrary: fc.constant([] as [number, Break][]) },
        { weight: 3, arbitrary: fc.array(fc.tuple(fc.nat(), breakArb), { minLength: 1, maxLength: 4 }) },
      ),
      edits: fc.array(editArb, { minLength: JOBS, maxLength: JOBS }),
      breakCompany: fc.oneof(
        { weight: 4, arbitrary: fc.constant(null) },
        {
          weight: 1,
          arbitrary: fc.constantFrom<[string, unknown]>(
            ['remote_level', 'sometimes'],
            ['schedule_type', 'always'],
            ['url', 'not a url'],
            ['id', 'nope'],
          ),
        },
      ),
    })

    await fc.assert(
      fc.asyncProperty(plan, async ({ order, breaks, edits, breakCompany }) => {
        runs++
        const dataDir = path.join(root, `run-${runs}`)
        await mkdir(dataDir, { recursive: true })
        // Breaks land on distinct positions; a duplicate needs an earlier record that stays valid.
        const brokenAt = new Map<number, Break>()
        for (const [n, broken] of breaks) {
          const position = n % order.length
          if (!brokenAt.has(position)) brokenAt.set(position, broken)
        }
        const lines: string[] = []
        const expectedLive = new Set<string>()
        const unbrokenBefore: Json[] = []
        for (const [position, index] of order.entries()) {
          const job = editRecord(baseJobs[index]!, edits[position]!)
          let broken = brokenAt.get(position)
          if (
            broken &&
            (broken.kind === 'duplicate-id' || broken.kind === 'duplicate-slug') &&
            unbrokenBefore.length === 0
          ) {
            broken = { kind: 'bad-enum', field: 'work_arrangement', value: 'moon' }
            brokenAt.set(position, broken)
          }
          if (broken) {
            lines.push(breakRecord(job, broken, unbrokenBefore))
          } else {
            lines.push(JSON.stringify(job))
            unbrokenBefore.push(job)
            if (
              job.status === 'live' &&
              (job.expires_at === undefined || Date.parse(String(job.expires_at)) > NOW.getTime())
            )
              expectedLive.add(String(job.slug))
          }
        }
        const companies = baseCompanies.map((c) => JSON.stringify(c))
        if (breakCompany) companies[0] = JSON.stringify({ ...baseCompanies[0], [breakCompany[0]]: breakCompany[1] })
        await writeFile(path.join(dataDir, 'jobs.ndjson'), `${lines.join('\n')}\n`)
        await writeFile(path.join(dataDir, 'companies.ndjson'), `${companies.join('\n')}\n`)
        await writeFile(path.join(dataDir, 'rates.json'), ratesText)
        brokenRecordsTried += brokenAt.size + (breakCompany ? 1 : 0)

        const before = await publishedState()
        let outcome: { ok: true; snapshotDir: string; liveJobs: number } | { ok: false; error: unknown }
        try {
          const result = await buildSnapshot({
            dataDir,
            distDir,
            siteUrl: 'https://jobsnap.example',
            now: NOW,
            progress: createProgress(process.stderr, true),
          })
          outcome = { ok: true, snapshotDir: result.snapshotDir, liveJobs: result.manifest.counts.live_jobs }
        } catch (error) {
          outcome = { ok: false, error }
        }

        if (brokenAt.size === 0 && !breakCompany) {
          // Valid data: published, exactly the live records, every v2 file a valid V2Job, no HTML.
          if (!outcome.ok) throw new Error(`a valid dataset was refused: ${(outcome.error as Error).message}`)
          published++
          expect(outcome.liveJobs).toBe(expectedLive.size)
          // Looked up through the layers, as a front does: a rebuild's job files may be a delta over another's.
          const files = jobFilesThroughLayers(outcome.snapshotDir)
          expect(new Set(files.keys())).toEqual(expectedLive)
          for (const [slug, file] of files) {
            const text = await readFile(file, 'utf8')
            const parsed = V2Job.safeParse(JSON.parse(text))
            expect(parsed.success, `${slug}: ${parsed.error?.message}`).toBe(true)
            expect(text).not.toMatch(/<script|<li>|<img|onerror|description_html/)
          }
          expect((await publishedState()).current).toBe(path.join(SNAPSHOTS_DIR, path.basename(outcome.snapshotDir)))
        } else {
          // Broken data: refused, every broken record named by its line, nothing published.
          if (outcome.ok)
            throw new Error(
              `a dataset with ${brokenAt.size} broken jobs${breakCompany ? ' and a broken company' : ''} was published`,
            )
          refused++
          expect(outcome.error).toBeInstanceOf(DatasetInvalidError)
          const issues = (outcome.error as DatasetInvalidError).issues
          for (const [position, broken] of brokenAt) {
            const onLine = issues.filter(
              (issue) => issue.source.file === 'jobs.ndjson' && issue.source.line === position + 1,
            )
            expect(
              onLine.length,
              `no issue for jobs.ndjson:${position + 1} (${JSON.stringify(broken)}); issues: ${(outcome.error as Error).message}`,
            ).toBeGreaterThan(0)
          }
          if (breakCompany)
            expect(issues.some((issue) => issue.source.file === 'companies.ndjson' && issue.source.line === 1)).toBe(
              true,
            )
          for (const issue of issues) expect(issue.message.length).toBeGreaterThan(0)
          expect(await publishedState()).toEqual(before)
        }
        await rm(dataDir, { recursive: true, force: true })
      }),
      { numRuns: 60 },
    )
    expect(published).toBeGreaterThan(0)
    expect(refused).toBeGreaterThan(0)
  })
})
