/**
 * Query parameters of `/api/v2/companies`: documented like the jobs list's
 * (rendered into `/openapi.yaml`) and parsed by the same rules (strict
 * integers, clamped paging, lists by comma or repetition, a single-valued
 * parameter given twice with different values refused).
 */
import { z } from 'zod'
import {
  clamp,
  integerParam,
  list,
  listValues,
  ONE_VALUE,
  PAGE_SIZE_DEFAULT,
  PAGE_SIZE_MAX,
  type ParamSpec,
  type ParseResult,
  pagingParams,
  scalarParam,
  searchTextParam,
  truncate,
} from './params.ts'
import { type CompanyCursor, cursorFromParams, cursorParam, encodeCursor, filtersTag } from './cursor.ts'
import { MAX_QUERY_TERMS } from './search.ts'
import { REMOTE_LEVEL_VALUES, type RemoteLevel } from './taxonomy.ts'

const Q_MAX_LENGTH = 200
const COMPANY_SORTS = ['name', 'jobs'] as const
type CompanySort = (typeof COMPANY_SORTS)[number]

export const V2_COMPANY_PARAMS = {
  ...pagingParams,
  page: { ...pagingParams.page, description: `${pagingParams.page.description} Not an integer: 400.${ONE_VALUE}` },
  limit: { ...pagingParams.limit, description: `${pagingParams.limit.description} Not an integer: 400.${ONE_VALUE}` },
  q: {
    kind: 'string',
    schema: z.string().max(Q_MAX_LENGTH),
    description: `Words in the company's name or one-line description: every word must begin a word there (case-insensitive; words of one or two letters must match whole). At most ${Q_MAX_LENGTH} characters and ${MAX_QUERY_TERMS} different words (400 above).${ONE_VALUE}`,
  },
  country: list('Headquarters country, by name or ISO 3166-1 alpha-2 code.', 'Germany', 'company'),
  schedule: list('The employer-wide schedule type, e.g. 4_day_week.', '4_day_week', 'company'),
  remote_level: {
    kind: 'enumList',
    schema: z.enum(REMOTE_LEVEL_VALUES).meta({ examples: ['fully_remote'] }),
    description: `Office-presence policy: any of ${REMOTE_LEVEL_VALUES.join(', ')}, comma-separated or repeated. Another value: 400.`,
  },
  hires_worldwide: {
    kind: 'enum',
    schema: z.enum(['true', 'false']),
    description: `true: only employers that hire worldwide; false: only those that do not. Another value: 400.${ONE_VALUE}`,
  },
  cursor: cursorParam('company', 'companies'),
  sort: {
    kind: 'enum',
    schema: z.enum(COMPANY_SORTS).default('name'),
    description: `name: by name, A to Z (ties by slug). jobs: most live jobs first, ties by name. Another value: 400.${ONE_VALUE}`,
  },
} satisfies Record<string, ParamSpec>

export interface V2CompanyQuery {
  page: number
  limit: number
  q?: string
  country: string[]
  schedule: string[]
  remote_level: RemoteLevel[]
  hires_worldwide?: boolean
  sort: CompanySort
  /** Where the page starts when asked for by cursor (then `page` is 1 and unused). */
  cursor?: CompanyCursor
}

const refuse = (field: string, message: string): ParseResult<never> => ({ ok: false, error: { field, message } })

/** Parses `/api/v2/companies` query parameters (docs/api.md: Companies). */
export function parseV2CompanyQuery(params: URLSearchParams): ParseResult<V2CompanyQuery> {
  const page = integerParam(params, 'page', true)
  if (!page.ok) return page
  const limit = integerParam(params, 'limit', true)
  if (!limit.ok) return limit

  const levels = listValues(params, 'remote_level')
  const badLevel = levels.find((value) => !(REMOTE_LEVEL_VALUES as readonly string[]).includes(value))
  if (badLevel !== undefined)
    return refuse(
      'remote_level',
      `remote_level must be one or more of ${REMOTE_LEVEL_VALUES.join(', ')}; got ${JSON.stringify(truncate(badLevel))}.`,
    )

  const worldwide = scalarParam(params, 'hires_worldwide')
  if (!worldwide.ok) return worldwide
  const worldwideRaw = worldwide.value?.trim().toLowerCase()
  if (worldwideRaw !== undefined && worldwideRaw !== 'true' && worldwideRaw !== 'false')
    return refuse(
      'hires_worldwide',
      `hires_worldwide must be true or false; got ${JSON.stringify(truncate(worldwideRaw))}.`,
    )

  const sort = scalarParam(params, 'sort')
  if (!sort.ok) return sort
  const sortRaw = sort.value?.trim().toLowerCase() ?? 'name'
  if (!(COMPANY_SORTS as readonly string[]).includes(sortRaw))
    return refuse('sort', `sort must be one of ${COMPANY_SORTS.join(', ')}; got ${JSON.stringify(truncate(sortRaw))}.`)

  const qParam = searchTextParam(params, 'q', Q_MAX_LENGTH)
  if (!qParam.ok) return qParam
  const q = qParam.value

  const value: V2CompanyQuery = {
    page: Math.max(1, page.value ?? 1),
    limit: clamp(limit.value ?? PAGE_SIZE_DEFAULT, 1, PAGE_SIZE_MAX),
    q: q || undefined,
    country: listValues(params, 'country'),
    schedule: listValues(params, 'schedule'),
    remote_level: levels as RemoteLevel[],
    hires_worldwide: worldwideRaw === undefined ? undefined : worldwideRaw === 'true',
    sort: sortRaw as CompanySort,
  }
  const cursor = cursorFromParams(params, value.sort, () => filtersTag(canonicalCompanyFilters(value)))
  if (!cursor.ok) return cursor
  return { ok: true, value: cursor.value ? { ...value, cursor: cursor.value } : value }
}

/** One string per meaning, for the response cache (see canonicalV2Query). */
export function canonicalCompanyQuery(query: V2CompanyQuery): string {
  return [query.page, query.limit, query.cursor ? encodeCursor(query.cursor) : '', canonicalCompanyFilters(query)].join(
    '|',
  )
}

/** The tag of a query's sort and filters that its cursors carry (see core/cursor.ts). */
export const companyFiltersTag = (query: V2CompanyQuery): string => filtersTag(canonicalCompanyFilters(query))

/** What selects and orders the companies, in one spelling: the query without page, limit and cursor. */
function canonicalCompanyFilters(query: V2CompanyQuery): string {
  const sorted = (values: string[]) => [...new Set(values)].sort().join(',')
  return [
    query.sort,
    query.q?.toLowerCase().replace(/\s+/g, ' ') ?? '',
    sorted(query.country),
    sorted(query.schedule),
    sorted(query.remote_level),
    query.hires_worldwide ?? '',
  ].join('|')
}
