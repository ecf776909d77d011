/**
 * The public response shapes, field by field. These schemas type the
 * v1/v2 transforms, check the build's output, and become the components of
 * `/openapi.yaml`, so every field carries its description here.
 */
import { z } from 'zod'
import { CONTRACT_TYPES, SALARY_PERIODS, SCHEDULE_TYPE_VALUES, WORK_ARRANGEMENTS } from '../taxonomy.ts'

const d = <T extends z.ZodType>(schema: T, description: string, extra: Record<string, unknown> = {}): T =>
  schema.meta({ description, ...extra })

const int64 = (description: string, min?: number) =>
  d(min === undefined ? z.int() : z.int().min(min), description, { format: 'int64' })
/** Weekly hours: a week has 168. */
const weeklyHours = (description: string) => d(z.int().min(1).max(168), description)
/** A page number or a count of results: what clients loop on, so its bounds are part of the contract. */
const page = (description: string) => d(z.int().min(1), description)
const pageSize = (description: string) => d(z.int().min(1).max(100), description)
const total = (description: string) => d(z.int().min(0), description)
/** The v2 lists' page number: null on a page asked for by cursor, which has none. */
const pageOrNull = (description: string) =>
  d(z.int().min(1).nullable(), `${description} null on a page asked for by cursor (it has no number).`)
const hasMore = d(
  z.boolean(),
  'True when more items follow this page: page * limit < total for a page by number; for a page by cursor, whether an item follows its last one (then next_cursor is set).',
)
const nextCursor = (item: string) =>
  d(
    z.string().nullable(),
    `Pass as cursor (with the same sort and filters) for the page that starts right after this page's last ${item}; null when none follows. Opaque. Unlike page numbers, cursors neither skip nor repeat a ${item} when the list changes between two requests.`,
  )
const uri = (description: string) => d(z.url(), description)
const dateTime = (description: string) => d(z.iso.datetime(), description)

export const V2Location = z
  .object({
    city: d(z.string(), 'City name.').optional(),
    state: d(z.string(), 'State, province or county.').optional(),
    country: d(z.string(), 'Country name in English.').optional(),
    continent: d(z.string(), 'Continent name in English.').optional(),
    region: d(z.string(), 'Region such as Worldwide, EMEA, Americas, APAC or LATAM.').optional(),
  })
  .meta({
    id: 'V2Location',
    description:
      'A place. Every field is optional; remote-allowed entries often name only a country, continent or region.',
  })

/**
 * The other location shape of this API's interface: older descriptions of
 * the list endpoint showed one `locations` array of these. Described so that
 * clients written against it keep validating and know what to read instead;
 * this server sends `office_locations` and `remote_allowed`.
 */
const V2LegacyLocation = z
  .object({
    country: d(z.string(), 'Country name in English.'),
    continent: d(z.string(), 'Continent name in English.'),
    work_arrangement: d(z.string(), 'onsite, hybrid or remote.'),
    is_primary: d(z.boolean(), 'True for the main location.'),
  })
  .meta({
    id: 'V2LegacyLocation',
    description:
      'One entry of the `locations` array that older descriptions of the list item showed. Not sent by this server: office_locations and remote_allowed carry the same facts.',
  })

const V2Tag = z
  .object({
    name: d(z.string(), 'Display name.'),
    slug: d(z.string(), 'Stable lowercase key, used by the `skills` filter.'),
  })
  .meta({ id: 'V2Tag', description: 'A skill, stack or tool tag.' })

export const V2Company = z
  .object({
    id: d(z.uuid(), 'Company id (UUID).'),
    slug: d(z.string(), 'Unique company key.'),
    name: d(z.string(), 'Company name.'),
    url: uri('Company page on the jobsnap public site.'),
    website: uri("Company's own website.").optional(),
    logo_url: uri('Logo image address.').optional(),
    short_description: d(z.string(), 'One-line description.').optional(),
    country: d(z.string(), 'Headquarters country.').optional(),
    employees: int64('Number of employees.', 1).optional(),
    schedule_type: d(z.enum(SCHEDULE_TYPE_VALUES), 'The employer-wide schedule policy.').optional(),
    // int64 in the contract's company table (the job's own weekly hours are plain integers there).
    hours_full_time: d(z.int().min(1).max(168), 'Weekly hours of a full-time employee.', {
      format: 'int64',
    }).optional(),
    remote_level: d(z.string(), 'Office-presence policy: fully_remote, remote_friendly or onsite.').optional(),
    work_life_score: d(
      z.int().min(0).max(100),
      'Work-life score from 0 to 100 (self-reported data, normalised by jobsnap).',
    ).optional(),
  })
  .meta({ id: 'V2Company', description: 'The employer, trimmed to what a job listing needs.' })

/** An employer's public profile: what a listing carries, plus what only the employer's own page needs. */
export const V2CompanyProfile = V2Company.extend({
  category: d(z.string(), 'Industry, e.g. Software.').optional(),
  description: d(z.string(), 'Plain-text description. HTML is never exposed.').optional(),
  schedule_type: d(z.enum(SCHEDULE_TYPE_VALUES), 'The employer-wide schedule policy.'),
  schedule_policy_text: d(z.string(), "The employer's own words on its schedule policy.").optional(),
  remote_level: d(z.string(), 'Office-presence policy: fully_remote, remote_friendly or onsite.'),
  hires_worldwide: d(z.boolean(), 'True when the employer hires in any country.'),
  benefits: d(z.array(z.string()), 'Benefits the employer lists (may be empty).'),
  day_off: d(z.string(), 'Which day is off, where the employer published it.').optional(),
  vacation_days: d(z.int().min(0).max(365), 'Paid vacation days a year, where published.').optional(),
  awards: d(z.array(z.string()), 'Awards, where published.').optional(),
  live_jobs: d(z.int().min(1), 'Live jobs now; a company is listed only while it has at least one.'),
  jobs_url: d(z.string(), 'Its live jobs: GET this path (`/api/v2/jobs?company=<slug>`).'),
}).meta({ id: 'V2CompanyProfile', description: 'An employer with at least one live job.' })
export type V2CompanyProfile = z.infer<typeof V2CompanyProfile>

export const V2Job = z
  .object({
    id: d(z.uuid(), 'Job id (UUID).'),
    slug: d(z.string(), 'Unique job key, used in `/api/v2/jobs/{slug}`.'),
    title: d(z.string(), 'Job title.'),
    description: d(z.string(), 'Plain-text description. HTML is never exposed.').optional(),
    url: uri('Public job page; there is no separate apply link.'),
    category: d(z.string(), 'Lowercase category slug, e.g. engineering.').optional(),
    role: d(z.string(), 'Role name, e.g. Backend Engineer.').optional(),
    level: d(z.string(), 'Lowercase seniority, e.g. senior.').optional(),
    contract_type: d(z.enum(CONTRACT_TYPES), 'Contract type.').optional(),
    schedule_type: d(
      z.enum(SCHEDULE_TYPE_VALUES),
      'Schedule type, e.g. 4_day_week or 9_day_fortnight. compressed_hours (same hours in fewer days) is not a four-day week.',
    ).optional(),
    hours_per_week_min: weeklyHours('Lowest weekly hours.').optional(),
    hours_per_week_max: weeklyHours('Highest weekly hours.').optional(),
    work_arrangement: d(z.enum(WORK_ARRANGEMENTS), 'Where the work happens.'),
    is_remote: d(z.boolean(), 'True when work_arrangement is not onsite.'),
    office_locations: d(z.array(V2Location), 'Offices the job is attached to.').optional(),
    remote_allowed: d(
      z.array(V2Location),
      'Where a remote worker may live: countries, continents, regions or Worldwide.',
    ).optional(),
    locations: d(
      z.array(V2LegacyLocation),
      'The other shape of the same facts, shown by older descriptions of the list item; never sent by this server (read office_locations and remote_allowed). Clients should accept either.',
    ).optional(),
    timezones: d(z.array(z.string()), 'Time zone names (IANA).').optional(),
    salary_min: int64('Lowest salary in the smallest currency unit (cents for USD).', 0).optional(),
    salary_max: int64('Highest salary in the smallest currency unit.', 0).optional(),
    salary_currency: d(z.string(), 'ISO 4217 currency code.').optional(),
    salary_period: d(z.enum(SALARY_PERIODS), 'Period the salary is paid for.').optional(),
    skills: d(z.array(V2Tag), 'Skills asked for.').optional(),
    stack: d(z.array(V2Tag), 'Technology stack.').optional(),
    tools: d(z.array(V2Tag), 'Tools used.').optional(),
    posted_at: dateTime('When the job was posted (RFC 3339, UTC).'),
    expires_at: dateTime('When the listing expires (RFC 3339, UTC); omitted when unknown.').optional(),
    company: V2Company.optional(),
  })
  .meta({ id: 'V2Job', description: 'A live job posting (v2 shape).' })
export type V2Job = z.infer<typeof V2Job>

const V1Tag = z
  .object({
    label: d(z.string(), 'Display name.'),
    value: d(z.string(), 'Slug form.'),
  })
  .meta({ id: 'V1Tag', description: 'A legacy filter tag.' })

export const V1Company = z
  .object({
    id_str: d(z.uuid(), 'Company id (UUID string).'),
    name: d(z.string(), 'Company name.'),
    slug: d(z.string(), 'Company key.'),
    url: uri('Company jobs page on the jobsnap public site (ends in /jobs).'),
    category: d(z.string(), 'Industry label.'),
    short_description: d(z.string(), 'One-line description.'),
    description: d(z.string(), 'Plain-text description.'),
    country: d(z.string(), 'Headquarters country.'),
    employees: int64('Number of employees.', 1),
    logo_url: uri('Logo image address.'),
    company_url: uri("Company's own website."),
    reduced_hours: d(z.string(), 'Schedule policy as readable text, e.g. "4 day week".'),
    four_day_reference_text: d(z.string(), "The company's own schedule policy text."),
    images: d(z.array(z.url()), 'Image addresses.'),
    remote_level: d(z.enum(['100% remote', 'Offers remote', 'Onsite']), 'Legacy remote label.'),
  })
  .partial()
  .meta({
    id: 'V1Company',
    description: 'Legacy company object. All fields optional; total_raised and HTML descriptions are never returned.',
  })

export const V1Job = z
  .object({
    id_str: d(z.uuid(), 'Job id (UUID string; an integer in the original API).'),
    title: d(z.string(), 'Job title.'),
    slug: d(z.string(), 'Job key.'),
    url: uri('Canonical public job page.'),
    description: d(z.string(), 'Plain-text description (empty when none was published).'),
    category: d(z.string(), 'Human-readable category, e.g. Engineering (empty when unknown).'),
    role: d(z.string(), 'Role name (empty when unknown).'),
    level: d(z.string(), 'Human-readable level, e.g. Senior or Mid-level (empty when unknown).'),
    hours: weeklyHours(
      'Weekly hours: the job maximum, else the employer full-time hours, else the typical hours of the schedule.',
    ),
    reduced_hours: d(z.string(), 'Schedule as readable text, e.g. "4 day week".'),
    is_remote: d(z.boolean(), 'True when the work arrangement is not onsite.'),
    location_city: d(z.string(), 'City of the primary office.').optional(),
    location_country: d(z.string(), 'Country of the primary office, else the first remote-allowed country.').optional(),
    location_continent: d(z.string(), 'Continent of the primary location.').optional(),
    location_original: d(z.string(), 'Free-text location label.').optional(),
    posted: int64('Posting time in Unix epoch seconds.'),
    filters: d(
      z.array(V1Tag),
      'Union of skills, stack and tools, de-duplicated by slug, ordered skills then stack then tools.',
    ),
    company_id: d(z.uuid(), 'Company id (UUID string).'),
    company_name: d(z.string(), 'Legacy identifier: the company slug.'),
    company: V1Company,
  })
  .meta({ id: 'V1Job', description: 'A live job posting in the legacy v1 shape.' })
export type V1Job = z.infer<typeof V1Job>

export const ErrorBody = z
  .object({
    error: d(
      z.object({
        code: d(z.int().min(400).max(599), 'Mirrors the HTTP status.'),
        message: d(z.string(), 'What went wrong and what is allowed.'),
        field: d(z.string(), 'The offending query parameter, when there is one.').optional(),
      }),
      'What went wrong.',
    ),
  })
  // Not `Error`: a generated TypeScript client would declare a type shadowing the global Error.
  .meta({ id: 'ErrorResponse', description: 'Error body of every 4xx and 5xx response.' })
export type ErrorBody = z.infer<typeof ErrorBody>

export const V1ListResponse = z
  .object({
    usage: d(z.string(), 'Courtesy notice: the API is free; please link back to the public website.'),
    page: page('Page returned.'),
    total: total('Total live jobs.'),
    has_more: d(z.boolean(), 'True while page * limit < total.'),
    jobs: d(z.array(V1Job), 'Jobs on this page, newest first.'),
  })
  .meta({ id: 'V1List', description: 'Legacy list wrapper.' })
export type V1ListResponse = z.infer<typeof V1ListResponse>

export const V2ListResponse = z
  .object({
    data: d(z.array(V2Job), 'Jobs on this page.'),
    page: pageOrNull('Page returned (after clamping).'),
    limit: pageSize('Page size used (after clamping).'),
    total: total('Jobs matching the filters (all of them, also on a page asked for by cursor).'),
    has_more: hasMore,
    next_cursor: nextCursor('job'),
    facets: d(
      z.record(z.string(), z.record(z.string(), z.int().min(1))),
      'Only when `facets` was given: per named filter, value -> jobs that value would match with the other filters applied (most first, at most 100).',
      { examples: [{ schedule: { standard: 412, '4_day_week': 97 } }] },
    ).optional(),
  })
  .meta({ id: 'V2List', description: 'v2 list wrapper.' })
export type V2ListResponse = z.infer<typeof V2ListResponse>

export const V2CompanyListResponse = z
  .object({
    data: d(z.array(V2CompanyProfile), 'Companies on this page.'),
    page: pageOrNull('Page returned (after clamping).'),
    limit: pageSize('Page size used (after clamping).'),
    total: total('Companies matching the filters (all of them, also on a page asked for by cursor).'),
    has_more: hasMore,
    next_cursor: nextCursor('company'),
  })
  .meta({ id: 'V2CompanyList', description: 'v2 company list wrapper.' })
export type V2CompanyListResponse = z.infer<typeof V2CompanyListResponse>

export const V2ChangesResponse = z
  .object({
    since: d(z.string(), 'The snapshot id asked about.'),
    until: d(z.string(), 'The live snapshot id (also in X-Snapshot-Id): poll with it next time.'),
    added: d(z.array(z.string()), 'Slugs of jobs live now that were not in `since`, sorted.'),
    updated: d(z.array(z.string()), 'Slugs of jobs live now and in `since` whose content differs, sorted.'),
    removed: d(
      z.array(z.string()),
      'Slugs of jobs in `since` that are not live now (closed, gone from the dataset, or expired since), sorted.',
    ),
  })
  .meta({
    id: 'V2Changes',
    description:
      'The jobs that changed between two snapshots; fetch the added and updated ones at /api/v2/jobs/{slug}.',
    examples: [
      {
        since: '20261124T182512983Z-140529c3',
        until: '20261124T184706413Z-8e4a1a19',
        added: ['senior-data-engineer-acme-1a'],
        updated: [],
        removed: ['junior-designer-globex-2b'],
      },
    ],
  })

const FilterValue = z
  .object({
    value: d(z.string(), 'The value to pass to the filter, as written here.'),
    jobs: d(z.int().min(0), 'Live jobs GET /api/v2/jobs returns with this one value for this filter.'),
  })
  .meta({ id: 'FilterValue', description: 'One value of a filter and its live job count.' })

const LabelledFilterValue = FilterValue.extend({ label: d(z.string(), 'Display name.') }).meta({
  id: 'LabelledFilterValue',
  description: 'One value of a filter, its display name and its live job count.',
})

export const V2FiltersResponse = z
  .object({
    snapshot_id: d(z.string(), 'The snapshot these counts are for.'),
    schedule: d(
      z.array(
        LabelledFilterValue.extend({
          definition: d(z.string(), 'What the schedule type means.'),
          reduces_hours: d(z.boolean(), 'True when it means fewer weekly hours than a standard week.'),
          full_pay: d(z.boolean(), 'True when pay is not reduced pro rata.'),
        }),
      ),
      'Every schedule type (the taxonomy), with its definition; a type no live job has counts 0.',
    ),
    category: d(z.array(LabelledFilterValue), 'Categories live jobs have, most jobs first.'),
    level: d(z.array(LabelledFilterValue), 'Seniority levels live jobs have, most jobs first.'),
    work_arrangement: d(z.array(FilterValue), 'onsite, hybrid and remote.'),
    skills: d(z.array(FilterValue), 'Skill, stack and tool slugs live jobs list, most jobs first.'),
    country: d(
      z.array(LabelledFilterValue),
      'Countries (ISO code, with the name) live jobs have an office in or allow remote work from, by name; the count is what the country filter returns, remote work from the continent, a region or anywhere included.',
    ),
    office_country: d(
      z.array(LabelledFilterValue),
      'Countries (ISO code, with the name) live jobs have an office in, most jobs first; the count is what office_country returns (offices only, no remote work).',
    ),
    region: d(
      z.array(FilterValue),
      'Regions live jobs allow remote work from (Worldwide included). Not a filter of its own: the country filter includes them.',
    ),
  })
  .meta({ id: 'V2Filters', description: 'Every v2 filter value with its live job count, for one snapshot.' })
export type V2FiltersResponse = z.infer<typeof V2FiltersResponse>
