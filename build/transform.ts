/**
 * Dataset records -> public shapes (core/schema/api.ts). Pure functions; the
 * output types come from the zod schemas in core/schema/api.ts.
 */
import { compile } from 'html-to-text'
import type { z } from 'zod'
import { compact, toV2Company } from '../core/company.ts'
import type { V1Company, V1Job, V2Job, V2Location } from '../core/schema/api.ts'
import type { DatasetCompany, DatasetJob, DatasetLocation } from '../core/schema/dataset.ts'
import {
  continentName,
  countryContinent,
  countryName,
  resolveContinent,
  resolveCountry,
  resolveRegion,
} from '../core/geo.ts'
import { REMOTE_LEVELS, SCHEDULE_TYPES, categoryLabel, levelLabel, scheduleLabel } from '../core/taxonomy.ts'

type V2LocationOut = z.infer<typeof V2Location>
type V1CompanyOut = z.infer<typeof V1Company>

// Compiled once: html-to-text's convert() re-parses its selectors on every call, which dominated build time.
const convertHtml = compile({
  wordwrap: false,
  selectors: [
    { selector: 'a', options: { hideLinkHrefIfSameAsText: true } },
    { selector: 'img', format: 'skip' },
    { selector: 'h1', options: { uppercase: false } },
    { selector: 'h2', options: { uppercase: false } },
    { selector: 'h3', options: { uppercase: false } },
    { selector: 'table', format: 'dataTable' },
  ],
})

/** HTML -> readable plain text: links keep their address, no tags or entities survive. */
function htmlToPlainText(html: string): string {
  return convertHtml(html).trim()
}

/** The plain-text description: the plain field when given, else the HTML one converted. */
export function plainDescription(record: { description?: string; description_html?: string }): string | undefined {
  if (record.description !== undefined && record.description.trim() !== '') return record.description.trim()
  if (record.description_html !== undefined) {
    const text = htmlToPlainText(record.description_html)
    return text === '' ? undefined : text
  }
  return undefined
}

/** RFC 3339 in UTC, without milliseconds when they are zero. */
function rfc3339(timestamp: string): string {
  return new Date(timestamp).toISOString().replace('.000Z', 'Z')
}

/** Canonical names for a dataset location; an office's continent is derived from its country. */
function toV2Location(location: DatasetLocation, fillContinent: boolean): V2LocationOut {
  const country = location.country ? resolveCountry(location.country) : undefined
  const continent = location.continent
    ? resolveContinent(location.continent)
    : fillContinent && country
      ? countryContinent(country)
      : undefined
  return compact({
    city: location.city,
    state: location.state,
    country: country ? countryName(country) : undefined,
    continent: continent ? continentName(continent) : undefined,
    region: location.region ? resolveRegion(location.region) : undefined,
  })
}

const tag = (t: { name: string; slug: string }) => ({ name: t.name, slug: t.slug })

/**
 * A company's v2 and v1 shapes, made once per company object rather than
 * once per job: its HTML description alone cost ~25 us a job. Keyed weakly,
 * so a dataset's companies are released with it. Callers share the result,
 * so they must not change it.
 */
function once<T>(make: (company: DatasetCompany) => T): (company: DatasetCompany) => T {
  const made = new WeakMap<DatasetCompany, T>()
  return (company) => {
    let value = made.get(company)
    if (value === undefined) {
      value = make(company)
      made.set(company, value)
    }
    return value
  }
}
const v2CompanyOf = once(toV2Company)
const v1CompanyOf = once(toV1Company)

export function toV2Job(job: DatasetJob, company: DatasetCompany): V2Job {
  return compact({
    id: job.id,
    slug: job.slug,
    title: job.title,
    description: plainDescription(job),
    url: job.url,
    category: job.category,
    role: job.role,
    level: job.level,
    contract_type: job.contract_type,
    schedule_type: job.schedule_type,
    hours_per_week_min: job.hours_per_week_min,
    hours_per_week_max: job.hours_per_week_max,
    work_arrangement: job.work_arrangement,
    is_remote: job.work_arrangement !== 'onsite',
    office_locations: job.office_locations?.map((l) => toV2Location(l, true)),
    remote_allowed: job.remote_allowed?.map((l) => toV2Location(l, false)),
    timezones: job.timezones,
    salary_min: job.salary_min,
    salary_max: job.salary_max,
    salary_currency: job.salary_currency,
    salary_period: job.salary_period,
    skills: job.skills?.map(tag),
    stack: job.stack?.map(tag),
    tools: job.tools?.map(tag),
    posted_at: rfc3339(job.posted_at),
    expires_at: job.expires_at ? rfc3339(job.expires_at) : undefined,
    company: v2CompanyOf(company),
  })
}

/** Skills, then stack, then tools, first occurrence of each slug wins. */
function v1Filters(job: Pick<DatasetJob, 'skills' | 'stack' | 'tools'>): { label: string; value: string }[] {
  const seen = new Set<string>()
  const filters: { label: string; value: string }[] = []
  for (const t of [...(job.skills ?? []), ...(job.stack ?? []), ...(job.tools ?? [])]) {
    if (seen.has(t.slug)) continue
    seen.add(t.slug)
    filters.push({ label: t.name, value: t.slug })
  }
  return filters
}

/** The company's public page with the legacy `/jobs` suffix. */
function v1CompanyUrl(url: string): string {
  return `${url.replace(/\/+$/, '')}/jobs`
}

function toV1Company(company: DatasetCompany): V1CompanyOut {
  const country = company.country ? resolveCountry(company.country) : undefined
  return compact({
    id_str: company.id,
    name: company.name,
    slug: company.slug,
    url: v1CompanyUrl(company.url),
    category: company.category,
    short_description: company.short_description,
    description: plainDescription(company),
    country: country ? countryName(country) : undefined,
    employees: company.employees,
    logo_url: company.logo_url,
    company_url: company.website,
    reduced_hours: scheduleLabel(company.schedule_type),
    four_day_reference_text: company.schedule_policy_text,
    images: company.images,
    remote_level: REMOTE_LEVELS[company.remote_level].label,
  })
}

/** A readable location label when the data team gave none: "Berlin, Germany" or "Remote (EMEA)". */
function locationLabel(v2: V2Job): string | undefined {
  const name = (l: V2LocationOut) => [l.city, l.state, l.country].filter(Boolean).join(', ') || l.continent || l.region
  const offices = (v2.office_locations ?? []).map(name).filter(Boolean)
  const remote = (v2.remote_allowed ?? []).map((l) => l.country ?? l.continent ?? l.region).filter(Boolean)
  const parts: string[] = []
  if (offices.length > 0) parts.push(offices.join('; '))
  if (v2.is_remote && remote.length > 0) parts.push(`Remote (${remote.join(', ')})`)
  else if (v2.is_remote && offices.length === 0) parts.push('Remote')
  return parts.length > 0 ? parts.join(' or ') : undefined
}

export function toV1Job(job: DatasetJob, company: DatasetCompany, v2: V2Job = toV2Job(job, company)): V1Job {
  const schedule = job.schedule_type ?? company.schedule_type
  const primary = v2.office_locations?.[0] ?? v2.remote_allowed?.[0]
  return compact({
    id_str: job.id,
    title: job.title,
    slug: job.slug,
    url: job.url,
    description: v2.description ?? '',
    category: job.category ? categoryLabel(job.category) : '',
    role: job.role ?? '',
    level: job.level ? levelLabel(job.level) : '',
    hours:
      job.hours_per_week_max ??
      job.hours_per_week_min ??
      company.hours_full_time ??
      SCHEDULE_TYPES[schedule].typicalWeeklyHours,
    reduced_hours: scheduleLabel(schedule),
    is_remote: v2.is_remote,
    location_city: v2.office_locations?.[0]?.city,
    location_country: primary?.country,
    location_continent: primary?.continent,
    location_original: job.location_original ?? locationLabel(v2),
    posted: Math.floor(Date.parse(job.posted_at) / 1000),
    filters: v1Filters(job),
    company_id: company.id,
    company_name: company.slug,
    company: v1CompanyOf(company),
  })
}
