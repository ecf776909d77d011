/**
 * Executes a /api/v2/companies query over a snapshot's companies. Pure: the
 * live job counts come in (counted once per snapshot and again only after an
 * expiry), so a company with no live job left is never listed.
 */
import type { V2CompanyQuery } from '../../core/company-query.ts'
import { companyNameOrder } from '../../core/company.ts'
import { type CompanyCursor, CURSOR_NAME_CHARS } from '../../core/cursor.ts'
import { resolveCountry } from '../../core/geo.ts'
import { PREFIX_MIN_TERM_LENGTH, queryTerms } from '../../core/search.ts'
import type { IndexedCompany } from '../../core/snapshot.ts'
import type { CompanyTable } from './company-table.ts'

export interface CompanyQueryResult {
  total: number
  /** The requested page, in order, with each one's live job count. */
  page: { company: IndexedCompany; liveJobs: number }[]
  /** Whether some match follows the page. */
  more: boolean
}

/** Name order, ties by slug (companyNameOrder, also the companies export's), for a cursor's cut name. */
const compareNames = (nameA: string, slugA: string, nameB: string, slugB: string) =>
  companyNameOrder({ name: nameA, slug: slugA }, { name: nameB, slug: slugB })

/**
 * Compares a company with a cursor's position in the cursor's order: <0
 * before it, >0 after. A cursor keeps the first CURSOR_NAME_CHARS of a name;
 * the company's name is cut as far, so the comparison agrees with the order
 * for every name but two longer ones that share that start.
 */
function compareWithCursor(companies: CompanyTable, i: number, liveJobs: number, cursor: CompanyCursor): number {
  if (cursor.sort === 'jobs' && liveJobs !== cursor.jobs) return cursor.jobs - liveJobs
  return compareNames(companies.name(i).slice(0, CURSOR_NAME_CHARS), companies.slug(i), cursor.name, cursor.slug)
}

/** The cursor that continues right after `company` in `sort` order, for filters tagged `filters`. */
export function companyCursorAt(
  company: IndexedCompany,
  liveJobs: number,
  sort: CompanyCursor['sort'],
  filters: string,
): CompanyCursor {
  const { name, slug } = company
  return sort === 'name' ? { sort, filters, name, slug } : { sort, filters, jobs: liveJobs, name, slug }
}

/** Every query word begins a word of the company's (short words must be whole words). */
function matchesText(companies: CompanyTable, i: number, words: string[]): boolean {
  const terms = companies.searchTerms(i)
  return words.every((word) => terms.includes(word.length < PREFIX_MIN_TERM_LENGTH ? ` ${word} ` : ` ${word}`))
}

export function runCompanyQuery(
  companies: CompanyTable,
  liveJobs: ReadonlyMap<string, number>,
  query: V2CompanyQuery,
): CompanyQueryResult {
  // Unknown countries resolve to nothing: a country filter naming only those matches no company.
  const countries = query.country.length
    ? new Set<string>(query.country.flatMap((c) => resolveCountry(c) ?? []))
    : undefined
  const schedules = query.schedule.length ? new Set(query.schedule) : undefined
  const levels = query.remote_level.length ? new Set<string>(query.remote_level) : undefined
  const words = query.q === undefined ? undefined : queryTerms(query.q)
  const matches: number[] = []
  for (const i of companies.inNameOrder(companyNameOrder)) {
    if (!liveJobs.get(companies.id(i))) continue
    if (countries) {
      const country = companies.country(i)
      if (!(country && countries.has(resolveCountry(country) ?? ''))) continue
    }
    if (schedules && !schedules.has(companies.scheduleType(i))) continue
    if (levels && !levels.has(companies.remoteLevel(i))) continue
    if (query.hires_worldwide !== undefined && companies.hiresWorldwide(i) !== query.hires_worldwide) continue
    if (words && !matchesText(companies, i, words)) continue
    matches.push(i)
  }
  const jobsOf = (i: number) => liveJobs.get(companies.id(i))!
  // Stable sort: equal job counts keep name order.
  if (query.sort === 'jobs') matches.sort((a, b) => jobsOf(b) - jobsOf(a))
  const { cursor } = query
  const start = cursor
    ? firstAfter(matches.length, (k) => compareWithCursor(companies, matches[k]!, jobsOf(matches[k]!), cursor) <= 0)
    : (query.page - 1) * query.limit
  return {
    total: matches.length,
    page: matches
      .slice(start, start + query.limit)
      .map((i) => ({ company: companies.company(i), liveJobs: jobsOf(i) })),
    more: start + query.limit < matches.length,
  }
}

/** The first index in [0, size) where `atOrBefore` turns false (binary search: it holds on a prefix only). */
function firstAfter(size: number, atOrBefore: (i: number) => boolean): number {
  let low = 0
  let high = size
  while (low < high) {
    const mid = (low + high) >>> 1
    if (atOrBefore(mid)) low = mid + 1
    else high = mid
  }
  return low
}
