/**
 * A brute-force oracle for the REST list endpoints, built only from the
 * dataset files (jobs.ndjson, companies.ndjson, rates.json) and public facts
 * (countries-list), never from the snapshot or the query engine. It restates
 * docs/api.md's rules (Parameters (v2), Country, Salary filters, Full
 * text, Sort, Live) as plain loops, so a test compares the server with the
 * contract rather than with itself.
 */
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { continents, countries, type TContinentCode, type TCountryCode } from 'countries-list'
// The one hand-made geography table: which countries form the trading regions
// (EMEA, APAC, ...). No package publishes it, so it is taken from the product.
import { regionsOfCountry } from '../../../core/index.ts'

interface RawLocation {
  city?: string
  state?: string
  country?: string
  continent?: string
  region?: string
}

interface RawTag {
  name: string
  slug: string
}

export interface RawJob {
  id: string
  slug: string
  status: 'live' | 'closed'
  company_id: string
  title: string
  description?: string
  description_html?: string
  url: string
  category?: string
  role?: string
  level?: string
  contract_type?: string
  schedule_type?: string
  hours_per_week_min?: number
  hours_per_week_max?: number
  work_arrangement: 'onsite' | 'hybrid' | 'remote'
  office_locations?: RawLocation[]
  remote_allowed?: RawLocation[]
  location_original?: string
  timezones?: string[]
  salary_min?: number
  salary_max?: number
  salary_currency?: string
  salary_period?: 'year' | 'month' | 'hour'
  skills?: RawTag[]
  stack?: RawTag[]
  tools?: RawTag[]
  posted_at: string
  expires_at?: string
}

export interface RawCompany {
  id: string
  slug: string
  name: string
  url: string
  website?: string
  schedule_type: string
  hours_full_time?: number
  remote_level: 'fully_remote' | 'remote_friendly' | 'onsite'
  country?: string
  [key: string]: unknown
}

export interface RawRates {
  as_of: string
  base: string
  usd_per_unit: Record<string, number>
}

/** One job record with everything the oracle needs precomputed. */
export interface OracleJob {
  raw: RawJob
  company: RawCompany
  postedMs: number
  expiresMs: number | undefined
  /** Effective schedule: the job's, else its employer's (data/README.md). */
  schedule: string | undefined
  /** Annualised whole-USD range (cents precision), undefined without salary. */
  salary: { low: number; high: number } | undefined
  /** Slugs of skills, stack and tools. */
  tags: Set<string>
}

export interface FilterSpec {
  category?: string[]
  level?: string[]
  schedule?: string[]
  work_arrangement?: string[]
  skills?: string[]
  /** Company slugs. */
  company?: string[]
  /** Country name or ISO code, any case. */
  country?: string
  /** Country names or ISO codes, any case: an office there (remote work does not count). */
  office_country?: string[]
  salary_min?: number
  salary_max?: number
  posted_after?: number
  sort?: 'date' | 'salary'
}

const DAY_MS = 86_400_000

// ---------------------------------------------------------------- geography

const countryByLower = new Map<string, TCountryCode>()
for (const [code, data] of Object.entries(countries) as [TCountryCode, (typeof countries)[TCountryCode]][]) {
  countryByLower.set(code.toLowerCase(), code)
  countryByLower.set(data.name.toLowerCase(), code)
  // countries-list also publishes common names ("Turkey", "USA", "Holland").
  const aliases = (data as { alias?: string[] }).alias ?? []
  for (const alias of aliases)
    if (!countryByLower.has(alias.toLowerCase())) countryByLower.set(alias.toLowerCase(), code)
}
const continentByLower = new Map<string, TContinentCode>()
for (const [code, name] of Object.entries(continents) as [TContinentCode, string][]) {
  continentByLower.set(name.toLowerCase(), code)
  continentByLower.set(code.toLowerCase(), code)
}

export function countryCode(nameOrCode: string): TCountryCode | undefined {
  return countryByLower.get(nameOrCode.trim().toLowerCase())
}

/** docs/api.md: Country: a country in both Europe and Asia is in both; otherwise its one continent. */
function continentsOf(code: TCountryCode): TContinentCode[] {
  const listed = (countries[code] as { continents?: TContinentCode[] }).continents ?? []
  return listed.includes('EU') && listed.includes('AS') ? ['EU', 'AS'] : [countries[code].continent]
}

/** docs/api.md: Country: office there, or remote_allowed naming the country, a continent or region containing it, or Worldwide. */
function jobMatchesCountry(job: RawJob, code: TCountryCode): boolean {
  for (const office of job.office_locations ?? []) {
    if (office.country !== undefined && countryCode(office.country) === code) return true
  }
  const regions = new Set(regionsOfCountry(code).map((r) => r.toLowerCase()))
  for (const place of job.remote_allowed ?? []) {
    if (place.country !== undefined && countryCode(place.country) === code) return true
    if (
      place.continent !== undefined &&
      continentsOf(code).includes(continentByLower.get(place.continent.trim().toLowerCase())!)
    )
      return true
    if (place.region !== undefined) {
      const region = place.region.trim().toLowerCase()
      if (region === 'worldwide' || regions.has(region)) return true
    }
  }
  return false
}

// ------------------------------------------------------------------- salary

function currencyDigits(currency: string): number {
  return new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2
}

/** docs/api.md: Salary filters: whole USD per year; hour x weekly hours (40 when unknown) x 52, month x 12. Kept to the cent. */
function annualUsd(job: RawJob, rates: RawRates): { low: number; high: number } | undefined {
  const { salary_min: min, salary_max: max, salary_currency: currency, salary_period: period } = job
  if ((min === undefined && max === undefined) || currency === undefined || period === undefined) return undefined
  const rate = rates.usd_per_unit[currency]
  if (rate === undefined) return undefined
  const hours = job.hours_per_week_max ?? job.hours_per_week_min ?? 40
  const perYear = period === 'year' ? 1 : period === 'month' ? 12 : hours * 52
  const usd = (minor: number) => Math.round((minor / 10 ** currencyDigits(currency)) * rate * perYear * 100) / 100
  return { low: usd(min ?? max!), high: usd(max ?? min!) }
}

// ---------------------------------------------------------------- the oracle

async function readNdjson<T>(file: string): Promise<T[]> {
  const text = await readFile(file, 'utf8')
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as T)
}

export class Oracle {
  readonly byId = new Map<string, OracleJob>()
  readonly bySlug = new Map<string, OracleJob>()

  constructor(
    readonly jobs: OracleJob[],
    readonly companies: RawCompany[],
    readonly rates: RawRates,
  ) {
    for (const job of jobs) {
      this.byId.set(job.raw.id, job)
      this.bySlug.set(job.raw.slug, job)
    }
  }

  static async load(dataDir: string): Promise<Oracle> {
    const rawJobs = await readNdjson<RawJob>(path.join(dataDir, 'jobs.ndjson'))
    const companies = await readNdjson<RawCompany>(path.join(dataDir, 'companies.ndjson'))
    const rates = JSON.parse(await readFile(path.join(dataDir, 'rates.json'), 'utf8')) as RawRates
    const companyById = new Map(companies.map((c) => [c.id, c]))
    const jobs = rawJobs.map((raw): OracleJob => {
      const company = companyById.get(raw.company_id)
      if (!company) throw new Error(`fixture job ${raw.id} names an unknown company`)
      return {
        raw,
        company,
        postedMs: Date.parse(raw.posted_at),
        expiresMs: raw.expires_at === undefined ? undefined : Date.parse(raw.expires_at),
        schedule: raw.schedule_type ?? company.schedule_type,
        salary: annualUsd(raw, rates),
        tags: new Set([...(raw.skills ?? []), ...(raw.stack ?? []), ...(raw.tools ?? [])].map((t) => t.slug)),
      }
    })
    return new Oracle(jobs, companies, rates)
  }

  /** Live: not closed, and expires_at absent or in the future. */
  isLive(job: OracleJob, now: number): boolean {
    return job.raw.status === 'live' && (job.expiresMs === undefined || job.expiresMs > now)
  }

  live(now: number): OracleJob[] {
    return this.jobs.filter((job) => this.isLive(job, now)).sort(byDate)
  }

  /** Every live job matching `spec`, in the order `spec.sort` asks for. */
  query(spec: FilterSpec, now: number): OracleJob[] {
    const lower = (values: string[] | undefined) => values?.map((v) => v.trim().toLowerCase()).filter((v) => v !== '')
    const anyOf = (values: string[] | undefined, value: string | undefined) =>
      values === undefined || values.length === 0 || (value !== undefined && values.includes(value.toLowerCase()))
    const category = lower(spec.category)
    const level = lower(spec.level)
    const schedule = lower(spec.schedule)
    const arrangement = lower(spec.work_arrangement)
    const skills = lower(spec.skills)
    const company = lower(spec.company)
    const country = spec.country?.trim() ? spec.country : undefined
    const code = country === undefined ? undefined : countryCode(country)
    const officeCodes = spec.office_country?.length
      ? new Set(spec.office_country.map((name) => countryCode(name)))
      : undefined
    const postedAfter = spec.posted_after ? Math.min(spec.posted_after, 365) : 0
    const hasSalaryFilter = spec.salary_min !== undefined || spec.salary_max !== undefined
    const out = this.live(now).filter((job) => {
      if (!anyOf(category, job.raw.category)) return false
      if (!anyOf(level, job.raw.level)) return false
      if (!anyOf(schedule, job.schedule)) return false
      if (!anyOf(arrangement, job.raw.work_arrangement)) return false
      if (skills !== undefined && skills.length > 0 && !skills.some((s) => job.tags.has(s))) return false
      if (!anyOf(company, job.company.slug)) return false
      if (country !== undefined && (code === undefined || !jobMatchesCountry(job.raw, code))) return false
      if (
        officeCodes &&
        !(job.raw.office_locations ?? []).some(
          (office) => office.country && officeCodes.has(countryCode(office.country)),
        )
      )
        return false
      if (postedAfter > 0 && job.postedMs < now - postedAfter * DAY_MS) return false
      if (hasSalaryFilter) {
        if (!job.salary) return false
        if (spec.salary_min !== undefined && job.salary.high < spec.salary_min) return false
        if (spec.salary_max !== undefined && job.salary.low > spec.salary_max) return false
      }
      return true
    })
    return spec.sort === 'salary' ? out.sort((a, b) => bySalary(a, b) || byDate(a, b)) : out
  }
}

/** sort=date: newest posted_at first, ties by id. */
export function byDate(a: OracleJob, b: OracleJob): number {
  return b.postedMs - a.postedMs || (a.raw.id < b.raw.id ? -1 : a.raw.id > b.raw.id ? 1 : 0)
}

/**
 * sort=salary without its tie-break: highest annualised USD first (the top of
 * the range), no salary last. 0 means "tied on salary".
 */
function bySalary(a: OracleJob, b: OracleJob): number {
  const sa = a.salary?.high
  const sb = b.salary?.high
  if (sa === undefined || sb === undefined) return sa === sb ? 0 : sa === undefined ? 1 : -1
  return sb - sa
}

/** sort=salary as docs/api.md states it: salary, then newest first; a full tie may go either way. */
export function salaryContractOrder(a: OracleJob, b: OracleJob): number {
  return bySalary(a, b) || b.postedMs - a.postedMs
}
