/**
 * The employer as the public API shows it: the trimmed form every v2 job
 * embeds, and the profile /api/v2/companies serves, made from one function
 * so a company reads the same wherever it appears. Shared by the build (which
 * embeds it in jobs) and the runtime (which serves profiles).
 */
import type { z } from 'zod'
import { countryName, resolveCountry } from './geo.ts'
import type { V2Company, V2CompanyProfile } from './schema/api.ts'
import type { DatasetCompany } from './schema/dataset.ts'

/** Removes keys whose value is undefined, so optional fields are omitted rather than null. */
export function compact<T extends object>(value: T): T {
  for (const key of Object.keys(value) as (keyof T)[]) if (value[key] === undefined) delete value[key]
  return value
}

/** The fields of a company record the public shapes read (the build's full record and the snapshot's trimmed one alike). */
type CompanyFields = Omit<DatasetCompany, 'description_html' | 'total_raised'>

/** The employer as a v2 job embeds it. */
export function toV2Company(company: CompanyFields): z.infer<typeof V2Company> {
  const country = company.country ? resolveCountry(company.country) : undefined
  return compact({
    id: company.id,
    slug: company.slug,
    name: company.name,
    url: company.url,
    website: company.website,
    logo_url: company.logo_url,
    short_description: company.short_description,
    country: country ? countryName(country) : undefined,
    employees: company.employees,
    schedule_type: company.schedule_type,
    hours_full_time: company.hours_full_time,
    remote_level: company.remote_level,
    work_life_score: company.work_life_score,
  })
}

/**
 * An employer's profile. `description` must already be plain text (the
 * snapshot's company index holds it so); `liveJobs` is counted at request time.
 */
export function toV2CompanyProfile(company: CompanyFields, liveJobs: number): V2CompanyProfile {
  return compact({
    ...toV2Company(company),
    category: company.category,
    description: company.description,
    schedule_type: company.schedule_type,
    schedule_policy_text: company.schedule_policy_text,
    remote_level: company.remote_level,
    hires_worldwide: company.hires_worldwide,
    benefits: company.benefits,
    day_off: company.day_off,
    vacation_days: company.vacation_days,
    awards: company.awards,
    live_jobs: liveJobs,
    jobs_url: `/api/v2/jobs?company=${encodeURIComponent(company.slug)}`,
  })
}

const byName = new Intl.Collator('en', { sensitivity: 'base' })
/** Name order, ties by slug: the company list's default order (and the companies export's). */
export const companyNameOrder = (a: { name: string; slug: string }, b: { name: string; slug: string }) =>
  byName.compare(a.name, b.name) || (a.slug < b.slug ? -1 : a.slug > b.slug ? 1 : 0)
