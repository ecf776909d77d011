/**
 * `jobsnap generate`: a deterministic, seeded dataset that looks real to a
 * job seeker. Fake names and text come from @faker-js/faker, countries,
 * capitals, continents and currencies from countries-list. Jobs are streamed
 * to disk one line at a time, so a million of them never sit in memory.
 */
import { once } from 'node:events'
import { createWriteStream } from 'node:fs'
import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { Faker, en } from '@faker-js/faker'
import { capitalOf, countryName, type CountryCode } from '../core/geo.ts'
import type { DatasetCompany, DatasetJob, ExchangeRates } from '../core/schema/dataset.ts'
import { SCHEDULE_TYPES, SCHEDULE_TYPE_VALUES, type ScheduleType } from '../core/taxonomy.ts'
import { countries } from 'countries-list'

export interface GenerateOptions {
  jobs: number
  companies: number
  seed: number
  outDir: string
  /** Reference time: postings are dated before it. Fixed by default so output is reproducible. */
  now?: Date
  siteUrl?: string
  onProgress?: (done: number, total: number) => void
}

/** Rates as of the reference date; USD per one unit. */
const SAMPLE_RATES: ExchangeRates = {
  as_of: '2026-11-01',
  base: 'USD',
  usd_per_unit: {
    USD: 1,
    EUR: 1.08,
    GBP: 1.27,
    CAD: 0.73,
    AUD: 0.66,
    CHF: 1.13,
    SEK: 0.095,
    NOK: 0.093,
    DKK: 0.145,
    PLN: 0.25,
    JPY: 0.0067,
    INR: 0.012,
    SGD: 0.74,
    BRL: 0.18,
    MXN: 0.055,
    NZD: 0.6,
    ZAR: 0.055,
  },
}

/** Countries employers sit in, weighted towards where job boards see most ads. */
const HOME_COUNTRIES: CountryCode[] = [
  'US',
  'US',
  'US',
  'GB',
  'GB',
  'DE',
  'DE',
  'NL',
  'FR',
  'ES',
  'IE',
  'SE',
  'DK',
  'NO',
  'PL',
  'CH',
  'CA',
  'CA',
  'AU',
  'NZ',
  'JP',
  'IN',
  'SG',
  'BR',
  'MX',
  'ZA',
  'PT',
  'IT',
  'BE',
  'AT',
]

const CATEGORIES: Record<string, { roles: string[]; skills: string[]; stack: string[]; tools: string[] }> = {
  engineering: {
    roles: [
      'Backend Engineer',
      'Frontend Engineer',
      'Full Stack Engineer',
      'Site Reliability Engineer',
      'Mobile Engineer',
      'Platform Engineer',
      'Security Engineer',
    ],
    skills: ['python', 'go', 'typescript', 'rust', 'java', 'kotlin', 'ruby', 'elixir', 'swift', 'system-design'],
    stack: ['react', 'node-js', 'postgresql', 'kubernetes', 'aws', 'django', 'rails', 'graphql', 'redis', 'terraform'],
    tools: ['github', 'docker', 'datadog', 'linear', 'jira', 'sentry'],
  },
  data: {
    roles: ['Data Scientist', 'Data Engineer', 'Machine Learning Engineer', 'Analytics Engineer', 'Data Analyst'],
    skills: ['python', 'sql', 'statistics', 'machine-learning', 'r'],
    stack: ['spark', 'dbt', 'snowflake', 'airflow', 'pytorch', 'postgresql'],
    tools: ['looker', 'jupyter', 'github', 'tableau'],
  },
  design: {
    roles: ['Product Designer', 'UX Researcher', 'Brand Designer', 'Design Systems Designer'],
    skills: ['ux-research', 'interaction-design', 'prototyping', 'visual-design', 'accessibility'],
    stack: ['design-systems', 'html-css'],
    tools: ['figma', 'sketch', 'miro', 'framer'],
  },
  product: {
    roles: ['Product Manager', 'Product Owner', 'Technical Product Manager', 'Head of Product'],
    skills: ['roadmapping', 'user-research', 'sql', 'analytics', 'prioritisation'],
    stack: ['saas'],
    tools: ['jira', 'linear', 'amplitude', 'notion', 'miro'],
  },
  marketing: {
    roles: ['Content Marketer', 'Growth Marketer', 'Product Marketing Manager', 'SEO Specialist'],
    skills: ['seo', 'copywriting', 'analytics', 'paid-acquisition', 'lifecycle-marketing'],
    stack: ['hubspot', 'wordpress'],
    tools: ['google-analytics', 'semrush', 'canva', 'notion'],
  },
  sales: {
    roles: ['Account Executive', 'Sales Development Representative', 'Sales Manager', 'Solutions Engineer'],
    skills: ['negotiation', 'saas-sales', 'prospecting', 'forecasting'],
    stack: ['salesforce', 'hubspot'],
    tools: ['gong', 'outreach', 'linkedin-sales-navigator'],
  },
  'customer-success': {
    roles: ['Customer Success Manager', 'Support Engineer', 'Customer Support Specialist', 'Implementation Manager'],
    skills: ['customer-empathy', 'troubleshooting', 'onboarding', 'sql'],
    stack: ['zendesk', 'intercom'],
    tools: ['zendesk', 'intercom', 'notion'],
  },
  operations: {
    roles: ['Operations Manager', 'Business Operations Analyst', 'Chief of Staff'],
    skills: ['process-design', 'analytics', 'project-management'],
    stack: ['airtable'],
    tools: ['notion', 'asana', 'google-workspace'],
  },
  finance: {
    roles: ['Financial Analyst', 'Accountant', 'Finance Manager', 'Controller'],
    skills: ['financial-modelling', 'accounting', 'forecasting', 'excel'],
    stack: ['netsuite', 'xero'],
    tools: ['excel', 'quickbooks'],
  },
  people: {
    roles: ['Recruiter', 'People Partner', 'Talent Acquisition Lead', 'People Operations Specialist'],
    skills: ['recruiting', 'employee-relations', 'employer-branding'],
    stack: ['greenhouse', 'bamboohr'],
    tools: ['greenhouse', 'lattice', 'notion'],
  },
}
const CATEGORY_NAMES = Object.keys(CATEGORIES)
const LEVELS = ['intern', 'junior', 'mid', 'mid', 'senior', 'senior', 'lead', 'principal', 'director']
/** Base annual salary in USD by level, before a per-country multiplier. */
const LEVEL_BASE_USD: Record<string, number> = {
  intern: 35_000,
  junior: 60_000,
  mid: 85_000,
  senior: 120_000,
  lead: 140_000,
  principal: 165_000,
  director: 180_000,
}
const COUNTRY_PAY_FACTOR: Partial<Record<CountryCode, number>> = {
  US: 1.25,
  CH: 1.2,
  GB: 0.9,
  DE: 0.85,
  IN: 0.35,
  BR: 0.4,
  MX: 0.4,
  PL: 0.55,
  ZA: 0.45,
  PT: 0.6,
  ES: 0.65,
  IT: 0.7,
  JP: 0.75,
}
const INDUSTRIES = [
  'Software',
  'Fintech',
  'Healthtech',
  'E-commerce',
  'Climate',
  'Education',
  'Media',
  'Logistics',
  'Cybersecurity',
  'Developer tools',
  'Marketplace',
  'Gaming',
]
const BENEFITS = [
  'Private health insurance',
  'Pension matching',
  'Learning budget',
  'Home office stipend',
  'Parental leave',
  'Equity',
  'Flexible hours',
  'Mental health support',
  'Gym membership',
  'Annual retreat',
  'Sabbatical',
  'Bike to work scheme',
]
const AWARDS = [
  'Best Places to Work',
  'Great Place to Work certified',
  'B Corp certified',
  'Top Remote Employer',
  '4 Day Week Pioneer',
  'Financial Times Best Employer',
]
const CLOSING_LINES = [
  'We review every application within two weeks.',
  'Interviews are remote and take about three hours in total.',
  'We welcome applicants from all backgrounds.',
  'Tell us about something you built that you are proud of.',
  'The team meets in person twice a year.',
  'Salary bands are published internally and reviewed every year.',
  'You will have a dedicated onboarding buddy for your first month.',
  'We do not use take-home assignments.',
]
const REGIONS = ['EMEA', 'Americas', 'APAC', 'LATAM']
const CONTINENT_NAMES = ['Europe', 'North America', 'South America', 'Asia', 'Africa', 'Oceania']

const SCHEDULE_WEIGHTS: [ScheduleType, number][] = [
  ['4_day_week', 30],
  ['9_day_fortnight', 12],
  ['4_5_day_week', 10],
  ['reduced_hours', 10],
  ['compressed_hours', 10],
  ['part_time', 6],
  ['standard', 22],
]

const slugify = (text: string) =>
  text
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')

const tagName = (slug: string) =>
  ({
    'node-js': 'Node.js',
    'html-css': 'HTML & CSS',
    sql: 'SQL',
    seo: 'SEO',
    aws: 'AWS',
    graphql: 'GraphQL',
    postgresql: 'PostgreSQL',
    dbt: 'dbt',
    r: 'R',
    ux: 'UX',
  })[slug] ??
  slug
    .split('-')
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join(' ')

function currencyFor(country: CountryCode): string {
  const currency = countries[country].currency[0] ?? 'USD'
  return SAMPLE_RATES.usd_per_unit[currency] !== undefined ? currency : 'USD'
}

function scheduleText(type: ScheduleType, dayOff: string | undefined, companyName: string): string {
  switch (type) {
    case '4_day_week':
      return `${companyName} works a 32-hour, four-day week at full pay${dayOff ? `; ${dayOff} is off for everyone` : ''}.`
    case '9_day_fortnight':
      return `Every other ${dayOff ?? 'Friday'} is off, at full pay.`
    case '4_5_day_week':
      return `We finish at lunchtime on ${dayOff ?? 'Friday'}s, with no cut in pay.`
    case 'reduced_hours':
      return 'Our full-time week is 35 hours over five days, at full pay.'
    case 'compressed_hours':
      return 'Full-time hours are worked in four 10-hour days.'
    case 'part_time':
      return 'Roles are part time with pay pro rata.'
    case 'standard':
      return 'A standard five-day working week with flexible start times.'
  }
}

/** Writes companies.ndjson, jobs.ndjson and rates.json to `outDir`. */
export async function generateDataset(options: GenerateOptions): Promise<{ jobs: number; companies: number }> {
  const faker = new Faker({ locale: [en] })
  faker.seed(options.seed)
  const now = (options.now ?? new Date('2026-11-22T00:00:00Z')).getTime()
  const siteUrl = (options.siteUrl ?? 'https://jobsnap.example').replace(/\/+$/, '')
  await mkdir(options.outDir, { recursive: true })

  const companies: (DatasetCompany & { home: CountryCode })[] = []
  const usedSlugs = new Set<string>()
  for (let i = 0; i < options.companies; i++) {
    const name = faker.company.name()
    let slug = slugify(name)
    while (usedSlugs.has(slug)) slug = `${slugify(name)}-${usedSlugs.size.toString(36)}`
    usedSlugs.add(slug)
    const home = faker.helpers.arrayElement(HOME_COUNTRIES)
    const schedule = faker.helpers.weightedArrayElement(SCHEDULE_WEIGHTS.map(([value, weight]) => ({ value, weight })))
    const dayOff =
      ['4_day_week', '9_day_fortnight', '4_5_day_week'].includes(schedule) && faker.datatype.boolean(0.7)
        ? faker.helpers.arrayElement(['Friday', 'Monday', 'Wednesday'])
        : undefined
    const remoteLevel = faker.helpers.weightedArrayElement([
      { value: 'fully_remote' as const, weight: 35 },
      { value: 'remote_friendly' as const, weight: 40 },
      { value: 'onsite' as const, weight: 25 },
    ])
    const company: DatasetCompany & { home: CountryCode } = {
      home,
      id: faker.string.uuid(),
      slug,
      name,
      url: `${siteUrl}/companies/${slug}`,
      website: `https://www.${slug.slice(0, 40)}.com`,
      logo_url: `https://logos.jobsnap.example/${slug}.png`,
      short_description: faker.company.catchPhrase(),
      category: faker.helpers.arrayElement(INDUSTRIES),
      country: countryName(home),
      employees: faker.number.int({ min: 5, max: 5000 }),
      schedule_type: schedule,
      schedule_policy_text: scheduleText(schedule, dayOff, name),
      hours_full_time:
        schedule === 'part_time' ? faker.number.int({ min: 20, max: 30 }) : SCHEDULE_TYPES[schedule].typicalWeeklyHours,
      remote_level: remoteLevel,
      hires_worldwide: remoteLevel === 'fully_remote' && faker.datatype.boolean(0.4),
      benefits: faker.helpers.arrayElements(BENEFITS, { min: 2, max: 6 }),
    }
    if (faker.datatype.boolean(0.5))
      company.description_html = `<p>${faker.company.buzzPhrase()}.</p><ul><li>${faker.company.catchPhrase()}</li><li>Founded in ${faker.number.int({ min: 1995, max: 2024 })}</li></ul>`
    else company.description = `${faker.company.buzzPhrase()}. ${faker.helpers.arrayElement(CLOSING_LINES)}`
    if (faker.datatype.boolean(0.8)) company.work_life_score = faker.number.int({ min: 40, max: 98 })
    if (dayOff) company.day_off = dayOff
    if (faker.datatype.boolean(0.7)) company.vacation_days = faker.number.int({ min: 20, max: 35 })
    if (faker.datatype.boolean(0.25)) company.awards = faker.helpers.arrayElements(AWARDS, { min: 1, max: 2 })
    if (faker.datatype.boolean(0.4))
      company.images = [1, 2, 3].map((n) => `https://images.jobsnap.example/${slug}/${n}.jpg`)
    if (faker.datatype.boolean(0.3)) company.total_raised = faker.number.int({ min: 1, max: 500 }) * 1_000_000
    companies.push(company)
  }
  await writeFile(
    path.join(options.outDir, 'companies.ndjson'),
    `${companies.map(({ home: _home, ...company }) => JSON.stringify(company)).join('\n')}\n`,
  )
  await writeFile(path.join(options.outDir, 'rates.json'), `${JSON.stringify(SAMPLE_RATES, null, 2)}\n`)

  const out = createWriteStream(path.join(options.outDir, 'jobs.ndjson'))
  for (let i = 0; i < options.jobs; i++) {
    const company = companies[i < companies.length ? i : faker.number.int(companies.length - 1)]!
    const line = `${JSON.stringify(generateJob(faker, company, i, now, siteUrl))}\n`
    if (!out.write(line)) await once(out, 'drain')
    if (i % 10_000 === 0) options.onProgress?.(i, options.jobs)
  }
  out.end()
  await once(out, 'finish')
  options.onProgress?.(options.jobs, options.jobs)
  return { jobs: options.jobs, companies: companies.length }
}

function generateJob(
  faker: Faker,
  company: DatasetCompany & { home: CountryCode },
  index: number,
  now: number,
  siteUrl: string,
): DatasetJob {
  const categoryName = faker.helpers.arrayElement(CATEGORY_NAMES)
  const category = CATEGORIES[categoryName]!
  const role = faker.helpers.arrayElement(category.roles)
  const level = faker.helpers.arrayElement(LEVELS)
  const title =
    level === 'mid' || level === 'intern'
      ? level === 'intern'
        ? `${role} Intern`
        : role
      : `${level[0]!.toUpperCase()}${level.slice(1)} ${role}`
  const schedule: ScheduleType = faker.datatype.boolean(0.85)
    ? company.schedule_type
    : faker.helpers.arrayElement(SCHEDULE_TYPE_VALUES)
  const arrangement =
    company.remote_level === 'fully_remote'
      ? 'remote'
      : company.remote_level === 'onsite'
        ? 'onsite'
        : faker.helpers.arrayElement(['hybrid', 'remote', 'onsite'] as const)
  const slug = `${slugify(title)}-${company.slug.slice(0, 30).replace(/-+$/, '')}-${index.toString(36)}`
  const postedAt = now - faker.number.int({ min: 0, max: 120 * 24 * 3600 }) * 1000
  const job: DatasetJob = {
    id: faker.string.uuid(),
    slug,
    status: faker.datatype.boolean(0.03) ? 'closed' : 'live',
    company_id: company.id,
    title,
    url: `${siteUrl}/jobs/${slug}`,
    category: categoryName,
    role,
    level,
    contract_type: faker.helpers.weightedArrayElement([
      { value: 'permanent' as const, weight: 85 },
      { value: 'contract' as const, weight: 10 },
      { value: 'freelance' as const, weight: 5 },
    ]),
    schedule_type: schedule,
    work_arrangement: arrangement,
    posted_at: new Date(postedAt).toISOString(),
  }
  const hours =
    schedule === 'part_time' ? faker.number.int({ min: 16, max: 30 }) : SCHEDULE_TYPES[schedule].typicalWeeklyHours
  if (faker.datatype.boolean(0.8)) {
    job.hours_per_week_max = hours
    if (faker.datatype.boolean(0.3)) job.hours_per_week_min = Math.max(1, hours - faker.number.int({ min: 0, max: 4 }))
  }

  const officeCountry = faker.datatype.boolean(0.7) ? company.home : faker.helpers.arrayElement(HOME_COUNTRIES)
  if (arrangement !== 'remote' || faker.datatype.boolean(0.3)) {
    const office = { city: capitalOf(officeCountry), country: countryName(officeCountry) }
    job.office_locations = faker.datatype.boolean(0.15)
      ? [office, { city: capitalOf(company.home), country: countryName(company.home) }].filter(
          (l, i, all) => all.findIndex((o) => o.city === l.city) === i,
        )
      : [office]
  }
  if (arrangement !== 'onsite') {
    const scope = company.hires_worldwide
      ? 'worldwide'
      : faker.helpers.weightedArrayElement([
          { value: 'country', weight: 45 },
          { value: 'continent', weight: 25 },
          { value: 'region', weight: 15 },
          { value: 'worldwide', weight: 15 },
        ])
    if (scope === 'country')
      job.remote_allowed = faker.helpers
        .arrayElements(
          HOME_COUNTRIES.filter((c, i, all) => all.indexOf(c) === i),
          { min: 1, max: 3 },
        )
        .map((c) => ({ country: countryName(c) }))
    else if (scope === 'continent') job.remote_allowed = [{ continent: faker.helpers.arrayElement(CONTINENT_NAMES) }]
    else if (scope === 'region') job.remote_allowed = [{ region: faker.helpers.arrayElement(REGIONS) }]
    else job.remote_allowed = [{ region: 'Worldwide' }]
  }
  if (faker.datatype.boolean(0.2))
    job.location_original = job.office_locations?.[0]
      ? `${job.office_locations[0].city}, ${job.office_locations[0].country}`
      : 'Remote'
  job.timezones = faker.helpers.arrayElements(
    [
      'Europe/London',
      'Europe/Berlin',
      'America/New_York',
      'America/Los_Angeles',
      'Asia/Tokyo',
      'Australia/Sydney',
      'Asia/Kolkata',
    ],
    { min: 0, max: 2 },
  )
  if (job.timezones.length === 0) delete job.timezones

  if (faker.datatype.boolean(0.8)) {
    const payCountry = job.office_locations ? officeCountry : company.home
    const currency = currencyFor(payCountry)
    const period = faker.helpers.weightedArrayElement([
      { value: 'year' as const, weight: 85 },
      { value: 'month' as const, weight: 10 },
      { value: 'hour' as const, weight: 5 },
    ])
    const annualUsd =
      LEVEL_BASE_USD[level]! * (COUNTRY_PAY_FACTOR[payCountry] ?? 0.8) * faker.number.float({ min: 0.85, max: 1.2 })
    const perPeriod = period === 'year' ? annualUsd : period === 'month' ? annualUsd / 12 : annualUsd / 52 / hours
    const exponent = currency === 'JPY' ? 0 : 2
    const step = period === 'hour' ? 1 : period === 'month' ? 50 : 1000
    const inCurrency = Math.round(perPeriod / SAMPLE_RATES.usd_per_unit[currency]! / step) * step
    const toMinor = (amount: number) => Math.round(amount * 10 ** exponent)
    job.salary_currency = currency
    job.salary_period = period
    const shape = faker.number.int({ min: 1, max: 10 })
    if (shape <= 7) {
      job.salary_min = toMinor(inCurrency)
      job.salary_max = toMinor(Math.round((inCurrency * faker.number.float({ min: 1.1, max: 1.35 })) / step) * step)
    } else if (shape <= 9) job.salary_min = toMinor(inCurrency)
    else job.salary_max = toMinor(inCurrency)
  }

  const pick = (pool: string[], max: number) =>
    faker.helpers.arrayElements(pool, { min: 1, max }).map((s) => ({ name: tagName(s), slug: s }))
  job.skills = pick(category.skills, 4)
  job.stack = pick(category.stack, 3)
  if (faker.datatype.boolean(0.7)) job.tools = pick(category.tools, 3)
  // Occasionally a skill reappears in the stack, as it does in real ads; v1 de-duplicates it.
  if (faker.datatype.boolean(0.1) && job.skills[0]) job.stack.push(job.skills[0])

  const intro = `${company.name} is hiring a ${title.toLowerCase()} to join the ${categoryName.replace('-', ' ')} team.`
  const duties = faker.helpers.multiple(() => faker.company.buzzPhrase(), { count: { min: 2, max: 4 } })
  if (faker.datatype.boolean(0.5)) {
    job.description_html = `<p>${intro}</p><h3>What you'll do</h3><ul>${duties.map((d) => `<li>${d}</li>`).join('')}</ul><p>Schedule: <strong>${SCHEDULE_TYPES[schedule].label}</strong> &amp; ${faker.helpers.arrayElement(CLOSING_LINES)}</p>`
  } else {
    job.description = `${intro}\n\nWhat you'll do:\n${duties.map((d) => `- ${d}`).join('\n')}\n\nSchedule: ${SCHEDULE_TYPES[schedule].label}. ${faker.helpers.arrayElement(CLOSING_LINES)}`
  }

  if (faker.datatype.boolean(0.25))
    job.expires_at = new Date(Date.UTC(2031, 0, 1) + faker.number.int({ min: 0, max: 365 }) * 86_400_000).toISOString()
  // A few listings ran out before the reference date: the build must drop them.
  else if (faker.datatype.boolean(0.03) && postedAt < now - 2 * 86_400_000)
    job.expires_at = new Date(postedAt + Math.floor((now - postedAt) / 2)).toISOString()
  return job
}
