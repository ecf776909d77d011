/**
 * The dataset contract: what the data team hands to `jobsnap build`.
 * Field names follow the v2 job wherever the meaning is the same.
 * `data/README.md` documents these records with one example of each.
 */
import { z } from 'zod'
import {
  CONTRACT_TYPES,
  REMOTE_LEVEL_VALUES,
  SALARY_PERIODS,
  SCHEDULE_TYPE_VALUES,
  WORK_ARRANGEMENTS,
} from '../taxonomy.ts'
import { resolveContinent, resolveCountry, resolveRegion } from '../geo.ts'

/** A slug: lowercase words of letters and digits joined by single `-` or `_`. Job and company URLs are made of them. */
export const SLUG_PATTERN = /^[a-z0-9]+(?:[-_][a-z0-9]+)*$/
const Slug = z.string().regex(SLUG_PATTERN, 'must be lowercase letters, digits and single - or _ separators')
const Uuid = z.uuid()
const Url = z.url({ protocol: /^https?$/ })
const Timestamp = z.iso.datetime({ offset: true })
const NonEmpty = z.string().trim().min(1)

/**
 * An HTML element's tag (opening or closing, `<img/src=x` and an unclosed
 * `<script ` included) or a comment. Only names HTML has: `List<String>`,
 * `Map<K, V>`, `Press <Enter>` or `<your name>` are text.
 */
const HTML_ELEMENTS =
  'a|abbr|address|area|article|aside|audio|b|base|bdi|bdo|blockquote|body|br|button|canvas|caption|center|cite|code|col|colgroup|data|datalist|dd|del|details|dfn|dialog|div|dl|dt|em|embed|fieldset|figcaption|figure|font|footer|form|frame|frameset|h[1-6]|head|header|hr|html|i|iframe|img|input|ins|kbd|label|legend|li|link|main|map|mark|marquee|math|menu|meta|meter|nav|noscript|object|ol|optgroup|option|output|p|param|picture|pre|progress|q|s|samp|script|section|select|slot|small|source|span|strike|strong|style|sub|summary|sup|svg|table|tbody|td|template|textarea|tfoot|th|thead|time|title|tr|track|tt|u|ul|var|video|wbr'
const MARKUP = new RegExp(`<\\/?(?:${HTML_ELEMENTS})(?=[\\s/>])[^<>]{0,60}>?|<!--`, 'i')
/**
 * Text the API publishes as it is: markup in it would reach every client's
 * page (a `<script>` included), so it is refused rather than published or
 * quietly stripped. HTML belongs in `description_html`, which the build
 * converts to text.
 */
const plainText = <T extends z.ZodString>(schema: T, where: string) =>
  schema.refine((text) => !MARKUP.test(text), {
    error: (issue) =>
      `plain text, but holds HTML markup (${MARKUP.exec(String(issue.input))?.[0].slice(0, 40)}); ${where}`,
  })
const PLAIN = 'remove the markup'

/**
 * Bounds far above any real posting that keep one broken record from
 * publishing a multi-megabyte job (every list page and feed that shows it
 * carries it too).
 */
const MAX_TITLE = 500
const MAX_DESCRIPTION = 200_000
const MAX_DESCRIPTION_HTML = 1_000_000
const MAX_TAGS = 200

const timeZoneKnown = new Map<string, boolean>()
/**
 * An IANA time zone name the platform knows, spelled as IANA spells it: Intl
 * also takes `europe/berlin`, which would then be published in that case.
 * (Intl's own canonical name is not the test: ICU still calls Asia/Kolkata
 * Asia/Calcutta.) Remembered, since a build asks ~1M times.
 */
function isTimeZone(name: string): boolean {
  let known = timeZoneKnown.get(name)
  if (known === undefined) {
    try {
      const resolved = new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone
      known = !(resolved !== name && resolved.toLowerCase() === name.toLowerCase())
    } catch {
      known = false
    }
    timeZoneKnown.set(name, known)
  }
  return known
}
const PLAIN_DESCRIPTION = 'put HTML in description_html, which the build converts to text'

export const DatasetLocation = z
  .strictObject({
    city: NonEmpty.optional(),
    state: NonEmpty.optional(),
    country: NonEmpty.refine(
      (v) => resolveCountry(v) !== undefined,
      'unknown country (use an English name or ISO 3166-1 alpha-2 code)',
    ).optional(),
    continent: NonEmpty.refine((v) => resolveContinent(v) !== undefined, 'unknown continent').optional(),
    region: NonEmpty.refine(
      (v) => resolveRegion(v) !== undefined,
      'unknown region (Worldwide, EMEA, Americas, APAC, LATAM)',
    ).optional(),
  })
  .refine((l) => l.city ?? l.state ?? l.country ?? l.continent ?? l.region, 'a location needs at least one field')
export type DatasetLocation = z.infer<typeof DatasetLocation>

const DatasetTag = z.strictObject({ name: plainText(NonEmpty, PLAIN), slug: Slug })

export const DatasetJob = z
  .strictObject({
    id: Uuid,
    slug: Slug,
    status: z.enum(['live', 'closed']),
    company_id: Uuid,
    title: plainText(NonEmpty.max(MAX_TITLE), PLAIN),
    /** Plain-text description. */
    description: plainText(z.string().max(MAX_DESCRIPTION), PLAIN_DESCRIPTION).optional(),
    /** HTML description; converted to plain text by the build, never published. */
    description_html: z.string().max(MAX_DESCRIPTION_HTML).optional(),
    url: Url,
    category: Slug.optional(),
    role: plainText(NonEmpty, PLAIN).optional(),
    level: Slug.optional(),
    contract_type: z.enum(CONTRACT_TYPES).optional(),
    schedule_type: z.enum(SCHEDULE_TYPE_VALUES).optional(),
    hours_per_week_min: z.int().min(1).max(80).optional(),
    hours_per_week_max: z.int().min(1).max(80).optional(),
    work_arrangement: z.enum(WORK_ARRANGEMENTS),
    office_locations: z.array(DatasetLocation).optional(),
    remote_allowed: z.array(DatasetLocation).optional(),
    /** Free-text location label shown by v1 as `location_original`. */
    location_original: plainText(NonEmpty, PLAIN).optional(),
    timezones: z
      .array(
        NonEmpty.refine(
          isTimeZone,
          'unknown time zone (use an IANA name, spelled as IANA does, such as Europe/Berlin)',
        ),
      )
      .optional(),
    /** Smallest currency unit (cents for USD). */
    salary_min: z.int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
    salary_max: z.int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
    salary_currency: z
      .string()
      .regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code such as USD')
      .optional(),
    salary_period: z.enum(SALARY_PERIODS).optional(),
    skills: z.array(DatasetTag).max(MAX_TAGS).optional(),
    stack: z.array(DatasetTag).max(MAX_TAGS).optional(),
    tools: z.array(DatasetTag).max(MAX_TAGS).optional(),
    posted_at: Timestamp,
    expires_at: Timestamp.optional(),
  })
  .superRefine((job, ctx) => {
    if (job.salary_min !== undefined && job.salary_max !== undefined && job.salary_min > job.salary_max) {
      ctx.addIssue({
        code: 'custom',
        path: ['salary_min'],
        message: `salary_min (${job.salary_min}) is greater than salary_max (${job.salary_max})`,
      })
    }
    const hasSalary = job.salary_min !== undefined || job.salary_max !== undefined
    if (hasSalary && !job.salary_currency)
      ctx.addIssue({ code: 'custom', path: ['salary_currency'], message: 'required when a salary is given' })
    if (hasSalary && !job.salary_period)
      ctx.addIssue({ code: 'custom', path: ['salary_period'], message: 'required when a salary is given' })
    if (
      job.hours_per_week_min !== undefined &&
      job.hours_per_week_max !== undefined &&
      job.hours_per_week_min > job.hours_per_week_max
    ) {
      ctx.addIssue({
        code: 'custom',
        path: ['hours_per_week_min'],
        message: 'hours_per_week_min is greater than hours_per_week_max',
      })
    }
    if (job.expires_at !== undefined && Date.parse(job.expires_at) < Date.parse(job.posted_at)) {
      ctx.addIssue({ code: 'custom', path: ['expires_at'], message: 'expires_at is before posted_at' })
    }
  })
export type DatasetJob = z.infer<typeof DatasetJob>

export const DatasetCompany = z.strictObject({
  id: Uuid,
  slug: Slug,
  name: plainText(NonEmpty, PLAIN),
  /** The company's page on the jobsnap public site (v1 appends `/jobs`). */
  url: Url,
  /** The company's own website. */
  website: Url.optional(),
  logo_url: Url.optional(),
  short_description: plainText(NonEmpty, PLAIN).optional(),
  description: plainText(z.string().max(MAX_DESCRIPTION), PLAIN_DESCRIPTION).optional(),
  description_html: z.string().max(MAX_DESCRIPTION_HTML).optional(),
  /** Industry label, e.g. "Software". */
  category: NonEmpty.optional(),
  /** Headquarters country. */
  country: NonEmpty.refine((v) => resolveCountry(v) !== undefined, 'unknown country').optional(),
  employees: z.int().min(1).optional(),
  schedule_type: z.enum(SCHEDULE_TYPE_VALUES),
  /** The employer's own words on its schedule policy. */
  schedule_policy_text: NonEmpty.optional(),
  hours_full_time: z.int().min(1).max(80).optional(),
  remote_level: z.enum(REMOTE_LEVEL_VALUES),
  hires_worldwide: z.boolean().default(false),
  benefits: z.array(NonEmpty).default([]),
  work_life_score: z.int().min(0).max(100).optional(),
  /** Which day is off, where the employer published it (e.g. "Friday"). */
  day_off: NonEmpty.optional(),
  vacation_days: z.int().min(0).max(365).optional(),
  awards: z.array(NonEmpty).optional(),
  images: z.array(Url).optional(),
  /** Accepted for compatibility with older exports; never published. */
  total_raised: z.number().optional(),
})
export type DatasetCompany = z.infer<typeof DatasetCompany>

export const ExchangeRates = z.strictObject({
  /** Date the rates were taken (YYYY-MM-DD). */
  as_of: z.iso.date(),
  base: z.literal('USD'),
  /** US dollars per one whole unit of each currency (USD itself is 1). */
  // Every currency's unit is worth between a billionth of a dollar and 10,000 dollars: outside that a rate is a
  // typo, and an extreme one (1e308) turns annual salaries into Infinity, which sort and filter as no salary at all.
  usd_per_unit: z.record(
    z.string().regex(/^[A-Z]{3}$/),
    z.number().min(1e-9, 'US dollars per unit: at least 0.000000001').max(10_000, 'US dollars per unit: at most 10000'),
  ),
})
export type ExchangeRates = z.infer<typeof ExchangeRates>
