/**
 * Query parameters of the REST list endpoints: their documented schemas (zod,
 * rendered into `/openapi.yaml`) and the parsers that apply docs/api.md's
 * parameter rules (clamping, 400 rules, repeated keys, case-insensitivity). Pure functions:
 * the runtime calls them per request, tests call them directly.
 */
import { z } from 'zod'
import {
  clamp,
  firstValue,
  integerParam,
  list,
  ONE_VALUE,
  PAGE_SIZE_DEFAULT,
  PAGE_SIZE_MAX,
  type ParamSpec,
  type ParseResult,
  pagingParams,
  scalarParam,
  listValues,
  strictInteger,
  searchTextParam,
  truncate,
} from './params.ts'
import { cursorFromParams, encodeCursor, filtersTag, type JobCursor, cursorParam } from './cursor.ts'
import { MAX_QUERY_TERMS } from './search.ts'
import { WORK_ARRANGEMENTS, type WorkArrangement } from './taxonomy.ts'

export { PAGE_SIZE_DEFAULT }
const POSTED_AFTER_MAX_DAYS = 365
const Q_MAX_LENGTH = 200
const SORTS = ['date', 'salary'] as const
type Sort = (typeof SORTS)[number]

/** The v2 filters `facets` can count, named as the filters are. */
export const FACET_NAMES = [
  'category',
  'level',
  'schedule',
  'work_arrangement',
  'skills',
  'country',
  'office_country',
  'company',
] as const
export type FacetName = (typeof FACET_NAMES)[number]

export const V2_LIST_PARAMS = {
  ...pagingParams,
  page: { ...pagingParams.page, description: `${pagingParams.page.description} Not an integer: 400.${ONE_VALUE}` },
  limit: { ...pagingParams.limit, description: `${pagingParams.limit.description} Not an integer: 400.${ONE_VALUE}` },
  category: list('Category slugs, e.g. engineering,sales.', 'engineering'),
  level: list('Seniority levels, e.g. senior,lead.', 'senior'),
  schedule: list('Schedule types, e.g. 4_day_week,9_day_fortnight.', '4_day_week'),
  work_arrangement: {
    kind: 'enumList',
    schema: z.enum(WORK_ARRANGEMENTS).meta({ examples: ['remote,hybrid'] }),
    description: `Any of ${WORK_ARRANGEMENTS.join(', ')}, comma-separated or repeated; a job matches any value. Another value: 400.`,
  },
  skills: list('Skill slugs, e.g. python,go. Matched against skills, stack and tools.', 'python'),
  company: list('Company slugs, as /api/v2/companies lists them.', 'acme'),
  country: {
    kind: 'list',
    schema: z.string().meta({ examples: ['Germany', 'DE'] }),
    description:
      'Country name or ISO 3166-1 alpha-2 code, case-insensitive (common names such as UK or USA too). Matches jobs with an office there, or whose remote_allowed names that country, a continent or region containing it, or Worldwide (office_country: offices only). Several countries, comma-separated or repeated, match any of them. An unknown country matches nothing.',
  },
  office_country: {
    kind: 'list',
    schema: z.string().meta({ examples: ['Germany', 'DE'] }),
    description:
      'Jobs with an office in that country: the same names and codes as country, without the jobs that are only remote from there (or from its continent, a region or anywhere). Several countries, comma-separated or repeated, match any of them. An unknown country matches nothing.',
  },
  salary_min: {
    kind: 'integer',
    schema: z.int().min(0),
    description: `Whole US dollars per year. Keeps jobs whose salary range reaches this amount (its top, or its bottom when there is no top), after converting currency and annualising (hour x weekly hours x 52, month x 12). Jobs without salary are left out. Negative or not an integer: 400.${ONE_VALUE}`,
  },
  salary_max: {
    kind: 'integer',
    schema: z.int().min(0),
    description: `Whole US dollars per year. Keeps jobs whose salary range starts at or below this amount. Jobs without salary are left out. Negative, not an integer, or below salary_min: 400.${ONE_VALUE}`,
  },
  posted_after: {
    kind: 'integer',
    schema: z.int().min(0),
    description: `Posted within the last N days. 0 means no restriction; values above ${POSTED_AFTER_MAX_DAYS} are capped at ${POSTED_AFTER_MAX_DAYS}. Negative or not an integer: 400.${ONE_VALUE}`,
  },
  q: {
    kind: 'string',
    schema: z.string().max(Q_MAX_LENGTH),
    description: `Full-text search over title, role, company, skills, stack, tools, locations and description. Every term must match; terms of 3+ characters match as prefixes; a term of 5+ characters that matches no word that way matches words one typo away (a letter added, dropped or replaced, or two neighbouring letters swapped). At most ${Q_MAX_LENGTH} characters and ${MAX_QUERY_TERMS} different words (400 above). Filters only: the order is still sort.${ONE_VALUE}`,
  },
  facets: {
    kind: 'enumList',
    schema: z.enum(FACET_NAMES).meta({ examples: ['category,schedule'] }),
    description: `Adds "facets" to the response: for each named filter (any of ${FACET_NAMES.join(', ')}), each value with the number of jobs it would match, counted with every other filter of the query applied but not its own, so the alternatives to a chosen value show. Countries by ISO code, companies by slug; values with no job left out; at most 100 values per facet, most jobs first. Comma-separated or repeated. Another name: 400.`,
  },
  cursor: cursorParam('job', 'jobs'),
  sort: {
    kind: 'enum',
    schema: z.enum(SORTS).default('date'),
    description: `date: newest first (ties by id). salary: highest annualised USD salary first (by the top of its range, or its bottom when there is no top), jobs without salary last, ties newest first. Another value: 400.${ONE_VALUE}`,
  },
} satisfies Record<string, ParamSpec>

/** The parameters a job feed takes: the v2 list's filters (a feed has no paging, cursor, sort or facets). */
export const FEED_PARAMS = (({ page: _p, limit: _l, cursor: _c, sort: _s, facets: _f, ...filters }) => filters)(
  V2_LIST_PARAMS,
)

export const V1_LIST_PARAMS = {
  page: {
    ...pagingParams.page,
    kind: 'lenientInteger',
    description: `${pagingParams.page.description} Lenient: a value that is not an integer falls back to 1; given twice, the first value counts.`,
  },
  limit: {
    ...pagingParams.limit,
    kind: 'lenientInteger',
    description: `Page size, 1 to ${PAGE_SIZE_MAX}: values below 1 become 1, values above ${PAGE_SIZE_MAX} become ${PAGE_SIZE_MAX}. Lenient: a value that is not an integer falls back to ${PAGE_SIZE_DEFAULT}; given twice, the first value counts.`,
  },
} satisfies Record<string, ParamSpec>

export interface V2ListQuery {
  page: number
  limit: number
  category: string[]
  level: string[]
  schedule: string[]
  work_arrangement: WorkArrangement[]
  skills: string[]
  /** Company slugs. */
  company: string[]
  country: string[]
  /** Countries the job has an office in (no remote-allowed part). */
  office_country: string[]
  salary_min?: number
  salary_max?: number
  posted_after?: number
  q?: string
  sort: Sort
  /** Facets to count alongside the page (not a filter). */
  facets: FacetName[]
  /** Where the page starts when asked for by cursor (then `page` is 1 and unused). */
  cursor?: JobCursor
}

/** A query with no filter: its first page of one job, in date order. Spread it and set what a caller filters on. */
export const NO_FILTER: Readonly<V2ListQuery> = {
  page: 1,
  limit: 1,
  category: [],
  level: [],
  schedule: [],
  work_arrangement: [],
  skills: [],
  company: [],
  country: [],
  office_country: [],
  sort: 'date',
  facets: [],
}

/** Parses `/api/v2/jobs` query parameters (docs/api.md: Parameters (v2)). */
export function parseV2ListQuery(params: URLSearchParams): ParseResult<V2ListQuery> {
  const page = integerParam(params, 'page', true)
  if (!page.ok) return page
  const limit = integerParam(params, 'limit', true)
  if (!limit.ok) return limit
  const salaryMin = integerParam(params, 'salary_min', false)
  if (!salaryMin.ok) return salaryMin
  const salaryMax = integerParam(params, 'salary_max', false)
  if (!salaryMax.ok) return salaryMax
  if (salaryMin.value !== undefined && salaryMax.value !== undefined) {
    // Compared as sent: integers past the safe range are clamped for matching, but 10^20 > 10^19 all the same.
    const [min, max] = [firstValue(params, 'salary_min')!.trim(), firstValue(params, 'salary_max')!.trim()]
    if (BigInt(min) > BigInt(max))
      return {
        ok: false,
        error: {
          field: 'salary_min',
          message: `salary_min (${truncate(min)}) must not be greater than salary_max (${truncate(max)}).`,
        },
      }
  }
  const postedAfter = integerParam(params, 'posted_after', false)
  if (!postedAfter.ok) return postedAfter

  const arrangements = listValues(params, 'work_arrangement')
  const badArrangement = arrangements.find((value) => !(WORK_ARRANGEMENTS as readonly string[]).includes(value))
  if (badArrangement !== undefined) {
    return {
      ok: false,
      error: {
        field: 'work_arrangement',
        message: `work_arrangement must be one or more of ${WORK_ARRANGEMENTS.join(', ')}; got ${JSON.stringify(truncate(badArrangement))}.`,
      },
    }
  }

  const facets = listValues(params, 'facets')
  const badFacet = facets.find((value) => !(FACET_NAMES as readonly string[]).includes(value))
  if (badFacet !== undefined) {
    return {
      ok: false,
      error: {
        field: 'facets',
        message: `facets must be one or more of ${FACET_NAMES.join(', ')}; got ${JSON.stringify(truncate(badFacet))}.`,
      },
    }
  }

  const sortParam = scalarParam(params, 'sort')
  if (!sortParam.ok) return sortParam
  const sortRaw = sortParam.value?.trim().toLowerCase() ?? 'date'
  if (!(SORTS as readonly string[]).includes(sortRaw)) {
    return {
      ok: false,
      error: {
        field: 'sort',
        message: `sort must be one of ${SORTS.join(', ')}; got ${JSON.stringify(truncate(sortRaw))}.`,
      },
    }
  }

  const qParam = searchTextParam(params, 'q', Q_MAX_LENGTH)
  if (!qParam.ok) return qParam
  const q = qParam.value

  const value: V2ListQuery = {
    page: Math.max(1, page.value ?? 1),
    limit: clamp(limit.value ?? PAGE_SIZE_DEFAULT, 1, PAGE_SIZE_MAX),
    category: listValues(params, 'category'),
    level: listValues(params, 'level'),
    schedule: listValues(params, 'schedule'),
    work_arrangement: arrangements as WorkArrangement[],
    skills: listValues(params, 'skills'),
    company: listValues(params, 'company'),
    country: listValues(params, 'country'),
    office_country: listValues(params, 'office_country'),
    salary_min: salaryMin.value,
    salary_max: salaryMax.value,
    posted_after: postedAfter.value === undefined ? undefined : Math.min(postedAfter.value, POSTED_AFTER_MAX_DAYS),
    q: q || undefined,
    sort: sortRaw as Sort,
    facets: [...new Set(facets)] as FacetName[],
  }
  // The filters' tag (a hash) only when there is a cursor to check it against.
  const cursor = cursorFromParams(params, value.sort, () => v2FiltersTag(value))
  if (!cursor.ok) return cursor
  return { ok: true, value: cursor.value ? { ...value, cursor: cursor.value } : value }
}

/** Parses `/api/v1` paging leniently: junk falls back to the default, range is clamped. */
export function parseV1Paging(params: URLSearchParams): { page: number; limit: number } {
  const page = strictInteger(firstValue(params, 'page') ?? '')
  const limit = strictInteger(firstValue(params, 'limit') ?? '')
  return {
    page: Math.max(1, page ?? 1),
    limit: clamp(limit ?? PAGE_SIZE_DEFAULT, 1, PAGE_SIZE_MAX),
  }
}

/**
 * A canonical string for a parsed query: two requests that mean the same
 * thing (`?` and `?page=1&limit=25`, `level=a,b` and `level=b&level=a`) share
 * one response-cache entry.
 */
export function canonicalV2Query(query: V2ListQuery): string {
  const sorted = (values: string[]) => [...new Set(values)].sort().join(',')
  return [
    query.page,
    query.limit,
    query.cursor ? encodeCursor(query.cursor) : '',
    canonicalV2Filters(query),
    sorted(query.facets),
  ].join('|')
}

/** The tag of a query's sort and filters that its cursors carry (see core/cursor.ts). */
export const v2FiltersTag = (query: V2ListQuery): string => filtersTag(canonicalV2Filters(query))

/** What selects and orders the jobs, in one spelling: the query without page, limit, cursor and facets. */
function canonicalV2Filters(query: V2ListQuery): string {
  const sorted = (values: string[]) => [...new Set(values)].sort().join(',')
  return [
    query.sort,
    sorted(query.category),
    sorted(query.level),
    sorted(query.schedule),
    sorted(query.work_arrangement),
    sorted(query.skills),
    sorted(query.company),
    sorted(query.country),
    sorted(query.office_country),
    query.salary_min ?? '',
    query.salary_max ?? '',
    query.posted_after ?? '',
    query.q?.toLowerCase().replace(/\s+/g, ' ') ?? '',
  ].join('|')
}
