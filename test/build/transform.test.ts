/**
 * Dataset records -> public shapes, field by field against the response
 * schemas (core/schema/api.ts, described in /openapi.yaml) and the fixed legacy v1 labels.
 * Records are written out by hand so each expectation can be read off them.
 */
import { rm } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Dataset, generateDataset, loadDataset, toV1Job, toV2Job } from '../../build/index.ts'
import { type DatasetCompany, type DatasetJob, V1Job, V2Job } from '../../core/index.ts'
import { tempDir } from '../support/fixtures.ts'

const COMPANY: DatasetCompany = {
  id: '6f1c2d3e-4a5b-4c6d-8e7f-0a1b2c3d4e5f',
  slug: 'acme-works',
  name: 'Acme Works',
  url: 'https://jobsnap.example/companies/acme-works',
  website: 'https://www.acme-works.com',
  logo_url: 'https://logos.jobsnap.example/acme-works.png',
  short_description: 'Anvils, delivered.',
  description_html: '<p>We build <strong>anvils</strong> &amp; rockets.</p><ul><li>Founded 1949</li></ul>',
  category: 'Manufacturing',
  country: 'DE',
  employees: 120,
  schedule_type: '4_day_week',
  schedule_policy_text: 'Fridays are off for everyone, at full pay.',
  hours_full_time: 32,
  remote_level: 'remote_friendly',
  hires_worldwide: false,
  benefits: ['Learning budget'],
  work_life_score: 87,
  day_off: 'Friday',
  vacation_days: 28,
  awards: ['Top Remote Employer'],
  images: ['https://images.jobsnap.example/acme-works/1.jpg'],
  total_raised: 25_000_000,
}

const JOB: DatasetJob = {
  id: '0b9e8d7c-6b5a-4f3e-9d2c-1b0a9f8e7d6c',
  slug: 'senior-backend-engineer-acme-works-1',
  status: 'live',
  company_id: COMPANY.id,
  title: 'Senior Backend Engineer',
  description_html:
    '<h3>About</h3><p>Tom &amp; Jerry&#39;s team &lt;3 caf&eacute;&nbsp;work.</p><ul><li><b>Go</b></li><li>Postgres</li></ul><p>Apply <a href="https://jobsnap.example/jobs/x">here</a></p><script>alert(1)</script>',
  url: 'https://jobsnap.example/jobs/senior-backend-engineer-acme-works-1',
  category: 'engineering',
  role: 'Backend Engineer',
  level: 'senior',
  contract_type: 'permanent',
  schedule_type: '4_day_week',
  hours_per_week_min: 30,
  hours_per_week_max: 32,
  work_arrangement: 'hybrid',
  office_locations: [{ city: 'Berlin', country: 'DE' }],
  remote_allowed: [{ country: 'gb' }, { continent: 'Europe' }, { region: 'emea' }, { region: 'Worldwide' }],
  timezones: ['Europe/Berlin'],
  salary_min: 8_000_000,
  salary_max: 9_550_050,
  salary_currency: 'EUR',
  salary_period: 'year',
  skills: [
    { name: 'Go', slug: 'go' },
    { name: 'SQL', slug: 'sql' },
  ],
  stack: [
    { name: 'PostgreSQL', slug: 'postgresql' },
    { name: 'Golang', slug: 'go' },
    { name: 'Kubernetes', slug: 'kubernetes' },
  ],
  tools: [
    { name: 'Docker', slug: 'docker' },
    { name: 'Postgres', slug: 'postgresql' },
    { name: 'GitHub', slug: 'github' },
  ],
  posted_at: '2026-11-15T10:30:45.750+02:00',
  expires_at: '2027-01-31T23:00:00-05:00',
}

/** The fewest fields a valid job can have. */
const MINIMAL_JOB: DatasetJob = {
  id: '1c2d3e4f-5a6b-4c7d-8e9f-a0b1c2d3e4f5',
  slug: 'warehouse-lead',
  status: 'live',
  company_id: COMPANY.id,
  title: 'Warehouse Lead',
  url: 'https://jobsnap.example/jobs/warehouse-lead',
  work_arrangement: 'onsite',
  posted_at: '2026-11-01T09:00:00Z',
}

/** The fewest fields a valid company can have. */
const MINIMAL_COMPANY: DatasetCompany = {
  id: '2d3e4f5a-6b7c-4d8e-9fa0-b1c2d3e4f5a6',
  slug: 'bare-co',
  name: 'Bare Co',
  url: 'https://jobsnap.example/companies/bare-co/',
  schedule_type: 'compressed_hours',
  remote_level: 'onsite',
  hires_worldwide: false,
  benefits: [],
}

/** Any HTML tag (opening, closing, comment, doctype) or character/entity reference. */
const HTML_TAG = /<\/?[a-z!][^>]*>/i
const HTML_ENTITY = /&(?:[a-z][a-z0-9]*|#[0-9]+|#x[0-9a-f]+);/i
const RFC3339_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z$/

describe('v2 job', () => {
  const v2 = toV2Job(JOB, COMPANY)

  it('copies identity fields and the lowercase category and level', () => {
    expect(v2.id).toBe(JOB.id)
    expect(v2.slug).toBe('senior-backend-engineer-acme-works-1')
    expect(v2.title).toBe('Senior Backend Engineer')
    expect(v2.url).toBe('https://jobsnap.example/jobs/senior-backend-engineer-acme-works-1')
    expect(v2.category).toBe('engineering')
    expect(v2.level).toBe('senior')
    expect(v2.role).toBe('Backend Engineer')
    expect(v2.contract_type).toBe('permanent')
    expect(v2.schedule_type).toBe('4_day_week')
    expect(v2.hours_per_week_min).toBe(30)
    expect(v2.hours_per_week_max).toBe(32)
    expect(v2.timezones).toEqual(['Europe/Berlin'])
  })

  it('keeps salaries in the smallest currency unit (cents), untouched', () => {
    expect(v2.salary_min).toBe(8_000_000)
    expect(v2.salary_max).toBe(9_550_050)
    expect(v2.salary_currency).toBe('EUR')
    expect(v2.salary_period).toBe('year')
    expect(Number.isInteger(v2.salary_min)).toBe(true)
  })

  it('writes timestamps as RFC 3339 in UTC', () => {
    expect(v2.posted_at).toBe('2026-11-15T08:30:45.750Z')
    expect(v2.expires_at).toBe('2027-02-01T04:00:00Z')
    expect(v2.posted_at).toMatch(RFC3339_UTC)
    expect(v2.expires_at).toMatch(RFC3339_UTC)
    expect(toV2Job(MINIMAL_JOB, COMPANY).posted_at).toBe('2026-11-01T09:00:00Z')
  })

  it('is_remote is true unless the work arrangement is onsite', () => {
    expect(v2.work_arrangement).toBe('hybrid')
    expect(v2.is_remote).toBe(true)
    expect(toV2Job({ ...JOB, work_arrangement: 'remote' }, COMPANY).is_remote).toBe(true)
    expect(toV2Job({ ...JOB, work_arrangement: 'onsite' }, COMPANY).is_remote).toBe(false)
  })

  it('names places canonically: offices get their continent, remote entries keep what they name', () => {
    expect(v2.office_locations).toEqual([{ city: 'Berlin', country: 'Germany', continent: 'Europe' }])
    expect(v2.remote_allowed).toEqual([
      { country: 'United Kingdom' },
      { continent: 'Europe' },
      { region: 'EMEA' },
      { region: 'Worldwide' },
    ])
  })

  it('keeps skills, stack and tools as separate {name, slug} lists, duplicates and all', () => {
    expect(v2.skills).toEqual([
      { name: 'Go', slug: 'go' },
      { name: 'SQL', slug: 'sql' },
    ])
    expect(v2.stack).toEqual(JOB.stack)
    expect(v2.tools).toEqual(JOB.tools)
  })

  it('turns description_html into plain text: no tags, no entities, text and link addresses kept', () => {
    const text = v2.description!
    expect(text).not.toMatch(HTML_TAG)
    expect(text).not.toMatch(HTML_ENTITY)
    expect(text).toContain("Tom & Jerry's team <3 café")
    expect(text).toContain('Go')
    expect(text).toContain('Postgres')
    expect(text).toContain('https://jobsnap.example/jobs/x')
    expect(text).not.toContain('alert(1)')
    expect(text.startsWith('About')).toBe(true)
    expect(JSON.stringify(v2)).not.toContain('description_html')
  })

  it('prefers the plain description when both are given', () => {
    const both = toV2Job({ ...JOB, description: '  Plain words.  ', description_html: '<p>Other</p>' }, COMPANY)
    expect(both.description).toBe('Plain words.')
  })

  it('trims the company to the v2 company fields (no total_raised, description or benefits)', () => {
    expect(v2.company).toEqual({
      id: COMPANY.id,
      slug: 'acme-works',
      name: 'Acme Works',
      url: 'https://jobsnap.example/companies/acme-works',
      website: 'https://www.acme-works.com',
      logo_url: 'https://logos.jobsnap.example/acme-works.png',
      short_description: 'Anvils, delivered.',
      country: 'Germany',
      employees: 120,
      schedule_type: '4_day_week',
      hours_full_time: 32,
      remote_level: 'remote_friendly',
      work_life_score: 87,
    })
  })

  it('omits optional fields that have no value instead of writing null', () => {
    const minimal = toV2Job(MINIMAL_JOB, MINIMAL_COMPANY)
    expect(Object.keys(minimal).sort()).toEqual([
      'company',
      'id',
      'is_remote',
      'posted_at',
      'slug',
      'title',
      'url',
      'work_arrangement',
    ])
    expect(Object.keys(minimal.company!).sort()).toEqual(['id', 'name', 'remote_level', 'schedule_type', 'slug', 'url'])
    const json = JSON.stringify(minimal)
    expect(json).not.toContain('null')
    for (const field of [
      'description',
      'expires_at',
      'salary_min',
      'salary_max',
      'salary_currency',
      'office_locations',
      'remote_allowed',
      'skills',
      'category',
      'level',
    ]) {
      expect(minimal, field).not.toHaveProperty(field)
    }
    expect(V2Job.strict().safeParse(minimal).success).toBe(true)
  })

  it('passes the V2Job schema with no extra keys', () => {
    expect(V2Job.strict().parse(v2)).toEqual(v2)
  })
})

describe('v1 job', () => {
  const v1 = toV1Job(JOB, COMPANY)

  it('renames identity fields and keeps the job page url', () => {
    expect(v1.id_str).toBe(JOB.id)
    expect(v1.slug).toBe(JOB.slug)
    expect(v1.title).toBe('Senior Backend Engineer')
    expect(v1.url).toBe(JOB.url)
    expect(v1.role).toBe('Backend Engineer')
    expect(v1.company_id).toBe(COMPANY.id)
    expect(v1.company_name).toBe('acme-works')
  })

  it('posted is Unix epoch seconds (an integer)', () => {
    // 2026-11-15T08:30:45.750Z
    expect(v1.posted).toBe(Date.UTC(2026, 10, 15, 8, 30, 45) / 1000)
    expect(Number.isInteger(v1.posted)).toBe(true)
  })

  it('filters: skills then stack then tools, de-duplicated by slug, first occurrence wins', () => {
    expect(v1.filters).toEqual([
      { label: 'Go', value: 'go' },
      { label: 'SQL', value: 'sql' },
      { label: 'PostgreSQL', value: 'postgresql' },
      { label: 'Kubernetes', value: 'kubernetes' },
      { label: 'Docker', value: 'docker' },
      { label: 'GitHub', value: 'github' },
    ])
    // Only tools given: order kept; nothing given: empty list, not absent.
    expect(
      toV1Job(
        {
          ...MINIMAL_JOB,
          tools: [
            { name: 'Jira', slug: 'jira' },
            { name: 'Git', slug: 'git' },
          ],
        },
        COMPANY,
      ).filters,
    ).toEqual([
      { label: 'Jira', value: 'jira' },
      { label: 'Git', value: 'git' },
    ])
    expect(toV1Job(MINIMAL_JOB, COMPANY).filters).toEqual([])
  })

  it('category and level are human labels', () => {
    expect(v1.category).toBe('Engineering')
    expect(v1.level).toBe('Senior')
    expect(toV1Job({ ...JOB, level: 'mid' }, COMPANY).level).toBe('Mid-level')
    expect(toV1Job({ ...JOB, category: 'customer-success' }, COMPANY).category).toBe('Customer Success')
    expect(toV1Job({ ...JOB, category: 'data' }, COMPANY).category).toBe('Data')
  })

  it('reduced_hours is readable schedule text, from the job else its company', () => {
    expect(v1.reduced_hours).toBe('4 day week')
    expect(toV1Job({ ...JOB, schedule_type: '9_day_fortnight' }, COMPANY).reduced_hours).toBe('9 day fortnight')
    expect(toV1Job({ ...JOB, schedule_type: 'compressed_hours' }, COMPANY).reduced_hours).toBe('Compressed hours')
    expect(toV1Job(MINIMAL_JOB, MINIMAL_COMPANY).reduced_hours).toBe('Compressed hours')
  })

  it('hours: the job maximum, else the employer full-time hours, else the schedule typical hours', () => {
    expect(v1.hours).toBe(32)
    expect(toV1Job({ ...MINIMAL_JOB, hours_per_week_min: 20 }, COMPANY).hours).toBe(20)
    expect(toV1Job(MINIMAL_JOB, COMPANY).hours).toBe(32)
    expect(toV1Job(MINIMAL_JOB, MINIMAL_COMPANY).hours).toBe(40)
  })

  it('is_remote is true unless onsite', () => {
    expect(v1.is_remote).toBe(true)
    expect(toV1Job({ ...JOB, work_arrangement: 'remote' }, COMPANY).is_remote).toBe(true)
    expect(toV1Job({ ...JOB, work_arrangement: 'onsite' }, COMPANY).is_remote).toBe(false)
  })

  it('location fields come from the primary office', () => {
    expect(v1.location_city).toBe('Berlin')
    expect(v1.location_country).toBe('Germany')
    expect(v1.location_continent).toBe('Europe')
    expect(v1.location_original).toBe('Berlin, Germany or Remote (United Kingdom, Europe, EMEA, Worldwide)')
    expect(toV1Job({ ...JOB, location_original: 'Berlin or anywhere in Europe' }, COMPANY).location_original).toBe(
      'Berlin or anywhere in Europe',
    )
  })

  it('description is plain text; required strings are empty, not missing, when unknown', () => {
    expect(v1.description).toBe(toV2Job(JOB, COMPANY).description)
    const minimal = toV1Job(MINIMAL_JOB, MINIMAL_COMPANY)
    expect(minimal.description).toBe('')
    expect(minimal.category).toBe('')
    expect(minimal.level).toBe('')
    expect(minimal.role).toBe('')
    expect(minimal).not.toHaveProperty('location_city')
    expect(minimal).not.toHaveProperty('location_country')
    expect(JSON.stringify(minimal)).not.toContain('null')
  })

  it('company: legacy fields, /jobs suffix, readable schedule, legacy remote label', () => {
    expect(v1.company).toEqual({
      id_str: COMPANY.id,
      name: 'Acme Works',
      slug: 'acme-works',
      url: 'https://jobsnap.example/companies/acme-works/jobs',
      category: 'Manufacturing',
      short_description: 'Anvils, delivered.',
      description: expect.any(String),
      country: 'Germany',
      employees: 120,
      logo_url: 'https://logos.jobsnap.example/acme-works.png',
      company_url: 'https://www.acme-works.com',
      reduced_hours: '4 day week',
      four_day_reference_text: 'Fridays are off for everyone, at full pay.',
      images: ['https://images.jobsnap.example/acme-works/1.jpg'],
      remote_level: 'Offers remote',
    })
    expect(v1.company.description).toBe('We build anvils & rockets.\n\n * Founded 1949')
  })

  it('company url gets /jobs without a double slash when the page url ends in /', () => {
    const url = toV1Job(MINIMAL_JOB, MINIMAL_COMPANY).company.url
    expect(url).toBe('https://jobsnap.example/companies/bare-co/jobs')
    expect(url!.replace('https://', '')).not.toContain('//')
  })

  it('remote_level uses the legacy labels 100% remote / Offers remote / Onsite', () => {
    expect(toV1Job(JOB, { ...COMPANY, remote_level: 'fully_remote' }).company.remote_level).toBe('100% remote')
    expect(toV1Job(JOB, { ...COMPANY, remote_level: 'remote_friendly' }).company.remote_level).toBe('Offers remote')
    expect(toV1Job(JOB, { ...COMPANY, remote_level: 'onsite' }).company.remote_level).toBe('Onsite')
  })

  it('never returns total_raised or any HTML', () => {
    expect(v1.company).not.toHaveProperty('total_raised')
    const json = JSON.stringify(v1)
    expect(json).not.toContain('total_raised')
    expect(json).not.toContain('25000000')
    expect(json).not.toContain('description_html')
    expect(json).not.toMatch(HTML_TAG)
    expect(json).not.toMatch(HTML_ENTITY)
    expect(json).not.toContain('<strong>')
  })

  it('passes the V1Job schema with no extra keys', () => {
    expect(V1Job.strict().parse(v1)).toEqual(v1)
    expect(V1Job.strict().safeParse(toV1Job(MINIMAL_JOB, MINIMAL_COMPANY)).success).toBe(true)
  })
})

describe('every record of a generated dataset', () => {
  let root: string
  let dataset: Dataset

  beforeAll(async () => {
    root = await tempDir('transform')
    const dataDir = path.join(root, 'data')
    await generateDataset({ jobs: 800, companies: 90, seed: 11, outDir: dataDir })
    dataset = await loadDataset(dataDir)
  })
  afterAll(async () => {
    await rm(root, { recursive: true, force: true })
  })

  it('transforms into records that parse with the V1Job and V2Job schemas', () => {
    const companies = new Map(dataset.companies.map((c) => [c.id, c]))
    const failures: string[] = []
    let withHtml = 0
    let withRaised = 0
    for (const job of dataset.jobs) {
      const company = companies.get(job.company_id)!
      if (job.description_html) withHtml++
      if (company.total_raised !== undefined) withRaised++
      const v2 = toV2Job(job, company)
      const v1 = toV1Job(job, company, v2)
      const v2Check = V2Job.strict().safeParse(v2)
      const v1Check = V1Job.strict().safeParse(v1)
      if (!v2Check.success) failures.push(`${job.slug} v2: ${v2Check.error.message}`)
      if (!v1Check.success) failures.push(`${job.slug} v1: ${v1Check.error.message}`)
      const v1Json = JSON.stringify(v1)
      const v2Json = JSON.stringify(v2)
      for (const [shape, json] of [
        ['v1', v1Json],
        ['v2', v2Json],
      ] as const) {
        if (HTML_TAG.test(json) || HTML_ENTITY.test(json)) failures.push(`${job.slug} ${shape}: HTML survived`)
        if (json.includes(':null')) failures.push(`${job.slug} ${shape}: null value`)
        if (json.includes('total_raised')) failures.push(`${job.slug} ${shape}: total_raised`)
      }
      if (v1.posted !== Math.floor(Date.parse(job.posted_at) / 1000)) failures.push(`${job.slug}: posted`)
      if (!v2.posted_at.match(RFC3339_UTC)) failures.push(`${job.slug}: posted_at ${v2.posted_at}`)
      if (new Set(v1.filters.map((f) => f.value)).size !== v1.filters.length)
        failures.push(`${job.slug}: duplicate filter`)
      if (!v1.company.url?.endsWith('/jobs')) failures.push(`${job.slug}: company url ${v1.company.url}`)
    }
    expect(failures).toEqual([])
    // The generated data really exercises the HTML and total_raised paths.
    expect(withHtml).toBeGreaterThan(100)
    expect(withRaised).toBeGreaterThan(50)
  })
})
