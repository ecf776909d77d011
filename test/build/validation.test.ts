/**
 * A bad dataset is refused as a whole (data/README.md "What the build checks",
 * docs/data.md): every problem is reported in one run with its file,
 * its NDJSON line (1-based) or JSON array index, the record id, the field and
 * the reason, and nothing is published.
 */
import { lstat, readdir, readlink, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { buildSnapshot, DatasetInvalidError, type DatasetIssue, loadDataset } from '../../build/index.ts'
import type { DatasetCompany, DatasetJob, ExchangeRates } from '../../core/index.ts'
import { FIXTURE_NOW, tempDir, testUuid, writeDatasetFiles } from '../support/fixtures.ts'
import { runCli } from '../../support/processes.ts'

const RATES: ExchangeRates = { as_of: '2026-11-01', base: 'USD', usd_per_unit: { USD: 1, EUR: 1.08 } }

function company(n: number, overrides: Partial<DatasetCompany> = {}): DatasetCompany {
  return {
    id: testUuid(n),
    slug: `company-${n}`,
    name: `Company ${n}`,
    url: `https://jobsnap.example/companies/company-${n}`,
    schedule_type: 'standard',
    remote_level: 'remote_friendly',
    hires_worldwide: false,
    benefits: [],
    ...overrides,
  }
}

function job(n: number, overrides: Partial<DatasetJob> = {}): DatasetJob {
  return {
    id: testUuid(1000 + n),
    slug: `job-${n}`,
    status: 'live',
    company_id: testUuid(1),
    title: `Job ${n}`,
    url: `https://jobsnap.example/jobs/job-${n}`,
    work_arrangement: 'remote',
    salary_min: 5_000_000,
    salary_max: 6_000_000,
    salary_currency: 'USD',
    salary_period: 'year',
    posted_at: '2026-11-10T09:00:00Z',
    ...overrides,
  }
}

const roots: string[] = []
afterEach(async () => {
  await Promise.all(roots.splice(0).map((root) => rm(root, { recursive: true, force: true })))
})

async function datasetDir(files: Record<string, unknown>): Promise<string> {
  const root = await tempDir('validation')
  roots.push(root)
  const dataDir = path.join(root, 'data')
  await writeDatasetFiles(dataDir, files)
  return dataDir
}

/** The issues loadDataset reports for a folder; fails the test when it does not throw DatasetInvalidError. */
async function issuesOf(dataDir: string): Promise<DatasetIssue[]> {
  const error = await loadDataset(dataDir).then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(DatasetInvalidError)
  return (error as DatasetInvalidError).issues
}

const BASE = {
  'rates.json': RATES,
  'companies.ndjson': [company(1), company(2)],
}

/** One of each problem data/README.md says the build refuses, with the issue it must produce. */
function everyProblem() {
  const dupSlug = job(3, { slug: 'job-1' })
  const dupId = job(11, { id: testUuid(1010) })
  const orphan = job(12, { company_id: testUuid(99) })
  const badCurrency = job(13, { salary_currency: 'XYZ' })
  const inverted = job(14, { salary_min: 9_000_000, salary_max: 8_000_000 })
  const badCountry = job(15, { office_locations: [{ city: 'Poseidonis', country: 'Atlantis' }] })
  const badEnum = { ...job(16), work_arrangement: 'office' }
  const files = {
    ...BASE,
    'companies.ndjson': [company(1), company(2), company(3, { id: testUuid(1) })],
    // Line 3 is blank (skipped but counted); line 5 is not JSON.
    'jobs.ndjson': [job(1), job(2), '', dupSlug, '{"id": "broken",'],
    'jobs-more.json': [job(10), dupId, orphan, badCurrency, inverted, badCountry, badEnum],
  }
  const expected: DatasetIssue[] = [
    {
      source: { file: 'companies.ndjson', line: 3 },
      recordId: testUuid(1),
      field: 'id',
      message: expect.stringMatching(/duplicate company id .*companies\.ndjson:1/),
    },
    {
      source: { file: 'jobs.ndjson', line: 4 },
      recordId: dupSlug.id,
      field: 'slug',
      message: expect.stringMatching(/duplicate job slug "job-1" .*jobs\.ndjson:1/),
    },
    { source: { file: 'jobs.ndjson', line: 5 }, message: expect.stringMatching(/not valid JSON/) },
    {
      source: { file: 'jobs-more.json', index: 1 },
      recordId: testUuid(1010),
      field: 'id',
      message: expect.stringMatching(/duplicate job id .*jobs-more\.json\[0\]/),
    },
    {
      source: { file: 'jobs-more.json', index: 2 },
      recordId: orphan.id,
      field: 'company_id',
      message: expect.stringContaining(testUuid(99)),
    },
    {
      source: { file: 'jobs-more.json', index: 3 },
      recordId: badCurrency.id,
      field: 'salary_currency',
      message: expect.stringMatching(/unknown currency XYZ.*EUR, USD/),
    },
    {
      source: { file: 'jobs-more.json', index: 4 },
      recordId: inverted.id,
      field: 'salary_min',
      message: expect.stringMatching(/greater than salary_max/),
    },
    {
      source: { file: 'jobs-more.json', index: 5 },
      recordId: badCountry.id,
      field: 'office_locations.0.country',
      message: expect.stringMatching(/unknown country/),
    },
    {
      source: { file: 'jobs-more.json', index: 6 },
      recordId: badEnum.id,
      field: 'work_arrangement',
      message: expect.stringMatching(/onsite.*hybrid.*remote/),
    },
  ]
  return { files, expected }
}

/** How the CLI prints where an issue is: `file:line` or `file[index]`. */
function where(issue: DatasetIssue): string {
  const { file, line, index } = issue.source
  return line !== undefined ? `${file}:${line}` : index !== undefined ? `${file}[${index}]` : file
}

describe('loadDataset names file, position, record, field and reason', () => {
  it('accepts the baseline dataset the broken ones are made from', async () => {
    const dataDir = await datasetDir({
      ...BASE,
      'jobs.ndjson': [job(1), job(2)],
      'jobs-more.json': [job(3, { salary_currency: 'EUR' })],
    })
    const dataset = await loadDataset(dataDir)
    // Files are read in sorted path order: jobs-more.json before jobs.ndjson.
    expect(dataset.jobs.map((j) => j.slug)).toEqual(['job-3', 'job-1', 'job-2'])
    expect(dataset.companies).toHaveLength(2)
  })

  it('duplicate job slug (NDJSON line, blank lines counted)', async () => {
    const dup = job(3, { slug: 'job-1' })
    const issues = await issuesOf(await datasetDir({ ...BASE, 'jobs.ndjson': [job(1), '', job(2), dup] }))
    expect(issues).toEqual([
      {
        source: { file: 'jobs.ndjson', line: 4 },
        recordId: dup.id,
        field: 'slug',
        message: 'duplicate job slug "job-1" (first seen at jobs.ndjson:1)',
      },
    ])
  })

  it('duplicate job id (JSON array index, also across files)', async () => {
    const dup = job(2, { id: testUuid(1001) })
    const issues = await issuesOf(await datasetDir({ ...BASE, 'jobs-a.json': [job(1)], 'jobs-b.json': [job(5), dup] }))
    expect(issues).toEqual([
      {
        source: { file: 'jobs-b.json', index: 1 },
        recordId: testUuid(1001),
        field: 'id',
        message: 'duplicate job id "00000000-0000-4000-8000-0000000003e9" (first seen at jobs-a.json[0])',
      },
    ])
  })

  it('duplicate company id', async () => {
    const issues = await issuesOf(
      await datasetDir({
        ...BASE,
        'companies.ndjson': [company(1), company(2), company(3, { id: testUuid(2) })],
        'jobs.json': [job(1)],
      }),
    )
    expect(issues).toEqual([
      {
        source: { file: 'companies.ndjson', line: 3 },
        recordId: testUuid(2),
        field: 'id',
        message: expect.stringMatching(/^duplicate company id .* \(first seen at companies\.ndjson:2\)$/),
      },
    ])
  })

  it('job whose company does not exist', async () => {
    const orphan = job(2, { company_id: testUuid(77) })
    const issues = await issuesOf(await datasetDir({ ...BASE, 'jobs.json': [job(1), orphan] }))
    expect(issues).toEqual([
      {
        source: { file: 'jobs.json', index: 1 },
        recordId: orphan.id,
        field: 'company_id',
        message: `no company has id ${testUuid(77)}`,
      },
    ])
  })

  it('unknown currency (not in the rate table)', async () => {
    const bad = job(1, { salary_currency: 'GBP' })
    const issues = await issuesOf(await datasetDir({ ...BASE, 'jobs.ndjson': [bad] }))
    expect(issues).toEqual([
      {
        source: { file: 'jobs.ndjson', line: 1 },
        recordId: bad.id,
        field: 'salary_currency',
        message: 'unknown currency GBP: the exchange-rate table has EUR, USD',
      },
    ])
  })

  it('salary_min greater than salary_max', async () => {
    const bad = job(1, { salary_min: 7_000_000, salary_max: 6_000_000 })
    const issues = await issuesOf(await datasetDir({ ...BASE, 'jobs.ndjson': [bad] }))
    expect(issues).toEqual([
      {
        source: { file: 'jobs.ndjson', line: 1 },
        recordId: bad.id,
        field: 'salary_min',
        message: 'salary_min (7000000) is greater than salary_max (6000000)',
      },
    ])
  })

  it('a line that is not JSON, without losing the records around it', async () => {
    const dup = job(3, { slug: 'job-1' })
    const issues = await issuesOf(
      await datasetDir({ ...BASE, 'jobs.ndjson': [job(1), '{"id": "oops", "slug": ', dup] }),
    )
    expect(issues).toEqual([
      { source: { file: 'jobs.ndjson', line: 2 }, message: expect.stringMatching(/^not valid JSON: /) },
      // The line after the broken one is still read and checked.
      {
        source: { file: 'jobs.ndjson', line: 3 },
        recordId: dup.id,
        field: 'slug',
        message: expect.stringContaining('duplicate job slug'),
      },
    ])
  })

  it('a .json file that is not JSON', async () => {
    const issues = await issuesOf(await datasetDir({ ...BASE, 'jobs.json': '[{"id": 1,]' }))
    expect(issues).toEqual([{ source: { file: 'jobs.json' }, message: expect.stringMatching(/^not valid JSON: /) }])
  })

  it('unknown country, in an office and in a company', async () => {
    const bad = job(1, {
      work_arrangement: 'hybrid',
      office_locations: [{ city: 'Berlin', country: 'Germany' }],
      remote_allowed: [{ country: 'Narnia' }],
    })
    const badCompany = company(2, { country: 'Atlantis' })
    const issues = await issuesOf(
      await datasetDir({ ...BASE, 'companies.ndjson': [company(1), badCompany], 'jobs.ndjson': [bad] }),
    )
    expect(issues).toEqual([
      {
        source: { file: 'companies.ndjson', line: 2 },
        recordId: badCompany.id,
        field: 'country',
        message: 'unknown country',
      },
      // The job names company 1, which is fine, so only its own problem is reported.
      {
        source: { file: 'jobs.ndjson', line: 1 },
        recordId: bad.id,
        field: 'remote_allowed.0.country',
        message: expect.stringMatching(/^unknown country/),
      },
    ])
  })

  it('bad enum values', async () => {
    const bad = { ...job(1), work_arrangement: 'office', status: 'paused' }
    const badCompany = { ...company(2), schedule_type: 'six_day_week' }
    const issues = await issuesOf(
      await datasetDir({ ...BASE, 'companies.ndjson': [company(1), badCompany], 'jobs.json': [bad] }),
    )
    expect(issues).toEqual([
      {
        source: { file: 'companies.ndjson', line: 2 },
        recordId: badCompany.id,
        field: 'schedule_type',
        message: expect.stringContaining('4_day_week'),
      },
      {
        source: { file: 'jobs.json', index: 0 },
        recordId: bad.id,
        field: 'status',
        message: expect.stringMatching(/live.*closed/),
      },
      {
        source: { file: 'jobs.json', index: 0 },
        recordId: bad.id,
        field: 'work_arrangement',
        message: expect.stringMatching(/onsite.*hybrid.*remote/),
      },
    ])
  })

  it('reports every problem of a dataset in one run, not just the first', async () => {
    const { files, expected } = everyProblem()
    const issues = await issuesOf(await datasetDir(files))
    for (const issue of expected) expect(issues).toContainEqual(issue)
    expect(issues).toHaveLength(expected.length)
  })

  it('the error message lists every issue too', async () => {
    const { files, expected } = everyProblem()
    const error = await loadDataset(await datasetDir(files)).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(DatasetInvalidError)
    const message = (error as Error).message
    expect(message).toMatch(new RegExp(`^dataset has ${expected.length} problems:`))
    for (const issue of expected)
      expect(message).toContain(
        `- ${where(issue)}${issue.recordId ? ` (id ${issue.recordId})` : ''}${issue.field ? ` ${issue.field}:` : ''}`,
      )
  })

  it('a missing rates file is an error', async () => {
    const issues = await issuesOf(await datasetDir({ 'companies.ndjson': [company(1)], 'jobs.ndjson': [job(1)] }))
    expect(issues).toEqual([
      { source: { file: 'rates.json' }, message: expect.stringMatching(/no exchange-rate table/) },
    ])
  })

  it('two rate tables are an error', async () => {
    const issues = await issuesOf(await datasetDir({ ...BASE, 'rates-2.json': RATES, 'jobs.ndjson': [job(1)] }))
    expect(issues).toEqual([
      { source: { file: 'rates-2.json, rates.json' }, message: 'expected one exchange-rate table, found 2' },
    ])
  })

  it('no jobs or companies file (a misspelt name), or no records in it: refused, never an empty snapshot', async () => {
    expect(await issuesOf(await datasetDir({ ...BASE, 'job.ndjson': [job(1)] }))).toEqual([
      { source: { file: 'jobs*' }, message: expect.stringMatching(/^no jobs file found \(expected jobs\*\.ndjson/) },
    ])
    expect(await issuesOf(await datasetDir({ ...BASE, 'jobs.ndjson': '' }))).toEqual([
      { source: { file: 'jobs.ndjson' }, message: 'no job records: refusing to publish a snapshot without any' },
    ])
    const noCompanies = await issuesOf(await datasetDir({ 'rates.json': RATES, 'jobs.ndjson': [job(1)] }))
    expect(noCompanies[0]).toEqual({
      source: { file: 'companies*' },
      message: expect.stringMatching(/^no companies file found/),
    })
  })

  it('bytes that are not UTF-8 are named by line and byte, never published as U+FFFD; a byte-order mark is skipped', async () => {
    const line = Buffer.from(JSON.stringify(job(1, { title: 'Job \uFFFD one' })))
    const at = line.indexOf('one')
    line[at] = 0xff
    const dataDir = await datasetDir({ ...BASE, 'jobs.ndjson': '' })
    await writeFile(
      path.join(dataDir, 'jobs.ndjson'),
      Buffer.concat([Buffer.from(`${JSON.stringify(job(2))}\n`), line]),
    )
    expect(await issuesOf(dataDir)).toEqual([
      {
        source: { file: 'jobs.ndjson', line: 2 },
        message: `not valid UTF-8: byte ${at + 1} is 0xff (save the file as UTF-8)`,
      },
    ])
    // Counted from the start of the line, a byte-order mark included.
    await writeFile(path.join(dataDir, 'jobs.ndjson'), Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), line]))
    expect(await issuesOf(dataDir)).toEqual([
      {
        source: { file: 'jobs.ndjson', line: 1 },
        message: `not valid UTF-8: byte ${at + 4} is 0xff (save the file as UTF-8)`,
      },
    ])
    // Spreadsheet and Windows exports start with a byte-order mark: read as if it were not there.
    const bom = Buffer.from([0xef, 0xbb, 0xbf])
    for (const [file, text] of [
      ['jobs.ndjson', JSON.stringify(job(1))],
      ['rates.json', JSON.stringify(RATES)],
    ] as const)
      await writeFile(path.join(dataDir, file), Buffer.concat([bom, Buffer.from(text)]))
    expect((await loadDataset(dataDir)).jobs.map((j) => j.id)).toEqual([job(1).id])
  })

  it('HTML in a plain-text field is refused, naming the markup; text with < in it is not markup', async () => {
    const issues = await issuesOf(
      await datasetDir({
        'rates.json': RATES,
        'companies.ndjson': [company(1, { short_description: '<img src=x onerror=alert(1)>' }), company(2)],
        'jobs.ndjson': [
          job(1, { description: '<script>alert(1)</script> hello' }),
          job(2, { title: 'Engineer <b>now</b>' }),
          job(3, {
            description:
              'Pay: a < b, 3<5, C++ <3, x > y; List<String>, Map<K, V>, Vec<u8>; press <Enter>; CV to <your name>',
            company_id: testUuid(2),
          }),
          job(4, { description: 'Hi <img/src=x onerror=alert(1)>', company_id: testUuid(2) }),
          job(5, { description: 'Hi <svg onload=alert(1) ', company_id: testUuid(2) }),
        ],
      }),
    )
    expect(issues.map((issue) => [issue.recordId, issue.field, issue.message])).toEqual([
      [
        testUuid(1),
        'short_description',
        'plain text, but holds HTML markup (<img src=x onerror=alert(1)>); remove the markup',
      ],
      [
        testUuid(1001),
        'description',
        'plain text, but holds HTML markup (<script>); put HTML in description_html, which the build converts to text',
      ],
      [testUuid(1002), 'title', 'plain text, but holds HTML markup (<b>); remove the markup'],
      [
        testUuid(1004),
        'description',
        'plain text, but holds HTML markup (<img/src=x onerror=alert(1)>); put HTML in description_html, which the build converts to text',
      ],
      [
        testUuid(1005),
        'description',
        'plain text, but holds HTML markup (<svg onload=alert(1) ); put HTML in description_html, which the build converts to text',
      ],
    ])
  })

  it('says what is wrong in plain words, once per field: required, the format expected, the values allowed', async () => {
    const { title: _title, ...untitled } = job(1)
    const issues = await issuesOf(
      await datasetDir({
        ...BASE,
        'jobs.ndjson': [
          untitled,
          job(2, { posted_at: '2026-11-10T09:00:00', salary_max: 1e300 }),
          job(3, { work_arrangement: 'moon' as never }),
        ],
      }),
    )
    expect(issues.map((issue) => `${issue.field}: ${issue.message}`)).toEqual([
      'title: required (a string)',
      'salary_max: must be at most 9007199254740991',
      'posted_at: expected an RFC 3339 date-time with its offset, such as 2026-11-10T09:00:00Z, got the string "2026-11-10T09:00:00"',
      'work_arrangement: must be one of "onsite", "hybrid", "remote", got the string "moon"',
    ])
  })

  it('a record far larger than any posting (a 10 MB description, 50,000 skills) is refused, saying the bound', async () => {
    const tag = (n: number) => ({ name: `Skill ${n}`, slug: `skill-${n}` })
    const issues = await issuesOf(
      await datasetDir({
        ...BASE,
        'jobs.ndjson': [
          job(1, { description: 'x'.repeat(10_000_000) }),
          job(2, { skills: Array.from({ length: 50_000 }, (_, n) => tag(n)) }),
          job(3, { description: 'y'.repeat(200_000), skills: Array.from({ length: 200 }, (_, n) => tag(n)) }),
        ],
      }),
    )
    expect(issues.map((issue) => `${issue.recordId} ${issue.field}: ${issue.message}`)).toEqual([
      `${testUuid(1001)} description: must be at most 200000 characters`,
      `${testUuid(1002)} skills: must be at most 200 values`,
    ])
  })

  it('a time zone that is no IANA name is refused', async () => {
    const issues = await issuesOf(
      await datasetDir({
        ...BASE,
        'jobs.ndjson': [
          job(1, { timezones: ['Europe/Berlin', 'Mars/Olympus', 'europe/berlin', 'Asia/Kolkata', 'UTC'] }),
        ],
      }),
    )
    expect(issues.map((issue) => `${issue.field}: ${issue.message}`)).toEqual([
      'timezones.1: unknown time zone (use an IANA name, spelled as IANA does, such as Europe/Berlin)',
      'timezones.2: unknown time zone (use an IANA name, spelled as IANA does, such as Europe/Berlin)',
    ])
  })

  it('an exchange rate no currency has (a typo that would turn salaries into Infinity) is refused', async () => {
    const rates = { ...RATES, usd_per_unit: { ...RATES.usd_per_unit, EUR: 1e308, SEK: 1e-320 } }
    const issues = await issuesOf(await datasetDir({ ...BASE, 'rates.json': rates, 'jobs.ndjson': [job(1)] }))
    expect(issues.map((issue) => `${issue.field}: ${issue.message}`)).toEqual([
      'usd_per_unit.EUR: US dollars per unit: at most 10000',
      'usd_per_unit.SEK: US dollars per unit: at least 0.000000001',
    ])
  })
})

describe('a refused dataset publishes nothing', () => {
  it('buildSnapshot throws DatasetInvalidError and leaves no current link', async () => {
    const { files, expected } = everyProblem()
    const dataDir = await datasetDir(files)
    const distDir = path.join(path.dirname(dataDir), 'dist')
    const error = await buildSnapshot({ dataDir, distDir, siteUrl: 'https://jobsnap.example', now: FIXTURE_NOW }).catch(
      (e: unknown) => e,
    )
    expect(error).toBeInstanceOf(DatasetInvalidError)
    expect((error as DatasetInvalidError).issues).toHaveLength(expected.length)
    await expect(lstat(path.join(distDir, 'current'))).rejects.toThrow(/ENOENT/)
  })

  it("read on a thread of its own or on the build's, the job files give the same issues in the same order", async () => {
    const { files, expected } = everyProblem()
    const dataDir = await datasetDir(files)
    // A line that is not UTF-8 too: found while reading, before any record is parsed.
    const bad = Buffer.from(JSON.stringify(job(20)))
    bad[bad.indexOf('Job')] = 0xff
    await writeFile(path.join(dataDir, 'jobs.ndjson'), Buffer.concat([bad, Buffer.from('\n')]), { flag: 'a' })
    const issuesWith = async (scanThread: boolean) => {
      const distDir = path.join(path.dirname(dataDir), `dist-${scanThread}`)
      const error = await buildSnapshot({
        dataDir,
        distDir,
        siteUrl: 'https://jobsnap.example',
        now: FIXTURE_NOW,
        scanThread,
      }).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(DatasetInvalidError)
      return (error as DatasetInvalidError).issues
    }
    const inThread = await issuesWith(false)
    expect(inThread).toHaveLength(expected.length + 1)
    expect(inThread.find((issue) => issue.source.line === 6)?.message).toMatch(/^not valid UTF-8: byte \d+ is 0xff/)
    expect(await issuesWith(true)).toEqual(inThread)
  })

  it('the real CLI exits non-zero, lists every problem on stderr and keeps the published snapshot', async () => {
    const { files, expected } = everyProblem()
    const badDir = await datasetDir(files)
    const root = path.dirname(badDir)
    const distDir = path.join(root, 'dist')

    // Nothing published yet: a failed build must not create `current`.
    const first = await runCli(['build', '--data', badDir, '--out', distDir, '--quiet'])
    expect(first.code).toBe(1)
    await expect(lstat(path.join(distDir, 'current'))).rejects.toThrow(/ENOENT/)

    // Publish a good snapshot, then fail again: `current` and the snapshot folders stay as they were.
    const goodDir = path.join(root, 'good')
    await writeDatasetFiles(goodDir, { ...BASE, 'jobs.ndjson': [job(1), job(2)] })
    const good = await buildSnapshot({
      dataDir: goodDir,
      distDir,
      siteUrl: 'https://jobsnap.example',
      now: FIXTURE_NOW,
    })
    const linkBefore = await readlink(path.join(distDir, 'current'))
    const foldersBefore = (await readdir(path.join(distDir, 'snapshots'))).sort()
    expect(foldersBefore).toEqual([good.snapshotId])

    const second = await runCli(['build', '--data', badDir, '--out', distDir, '--quiet'])
    expect(second.code).toBe(1)
    expect(second.stdout).not.toMatch(/published snapshot/)
    expect(second.stderr).toContain(`build failed: ${expected.length} problems in ${badDir}; nothing was published.`)
    const lines = second.stderr.split('\n')
    for (const issue of expected) {
      const line = lines.find((l) => l.trimStart().startsWith(`${where(issue)} `) || l.trim() === where(issue))
      expect(line, `stderr names ${where(issue)}`).toBeDefined()
      if (issue.recordId) expect(line).toContain(`(id ${issue.recordId})`)
      if (issue.field) expect(line).toContain(` ${issue.field}:`)
    }
    expect(await readlink(path.join(distDir, 'current'))).toBe(linkBefore)
    expect((await readdir(path.join(distDir, 'snapshots'))).sort()).toEqual(foldersBefore)
  })
})
