/**
 * Executes a parsed v2 list query against a JobIndex. Pure: no I/O, no
 * clock (the caller passes `now`). Cost: one walk of each posting list the
 * query names, per-job checks on its matches only, and a walk of the sort
 * order that stops when the page is full.
 */
import { countryContinent, regionsOfCountry, resolveCountry } from '../../core/geo.ts'
import type { V2ListQuery } from '../../core/query.ts'
import { placeKey } from '../../core/snapshot.ts'
import { markEveryStep } from './intersect.ts'
import type { Facet, JobIndex, RangeColumns } from './job-index.ts'
import type { TextIndex } from './text-index.ts'

const DAY_MS = 86_400_000

export interface QueryResult {
  total: number
  /** Positions on the requested page, in order. */
  positions: number[]
}

/** The location keys a country answers to: itself, its continent, every region containing it (Worldwide too). */
export function placeKeysForCountry(country: string): string[] {
  const code = resolveCountry(country)
  if (!code) return []
  return [placeKey.country(code), placeKey.continent(countryContinent(code)), ...regionsOfCountry(code).map(placeKey.region)]
}

/**
 * Filter groups: a job must be in at least one posting list of every group.
 * Values are de-duplicated: each posting list is walked once per group, so a
 * URL repeating one value thousands of times (`country=de,de,de,...`, or many
 * countries sharing a continent and region) costs no more than naming it once.
 */
export function filterGroups(query: V2ListQuery): [Facet, string[]][] {
  const groups: [Facet, string[]][] = []
  const push = (facet: Facet, values: string[]) => {
    if (values.length) groups.push([facet, [...new Set(values)]])
  }
  push('category', query.category)
  push('level', query.level)
  push('schedule', query.schedule)
  push('work_arrangement', query.work_arrangement)
  push('tag', query.skills)
  // A country list that resolves to no place still filters (to nothing), as before.
  if (query.country.length) groups.push(['place', [...new Set([...new Set(query.country)].flatMap(placeKeysForCountry))]])
  return groups
}

export interface QueryContext {
  index: JobIndex
  text: TextIndex
  now: number
}

/** A `q` term that matches no vocabulary term: the query matches nothing. */
const NOTHING = 'nothing'

/** The membership steps of a query (filter groups, then `q` terms); undefined when nothing restricts by membership. */
function membershipSteps({ index, text }: QueryContext, query: V2ListQuery, extraGroups: [Facet, string[]][]): Uint32Array[][] | undefined | typeof NOTHING {
  const steps: Uint32Array[][] = [...filterGroups(query), ...extraGroups].map(([facet, values]) =>
    values.flatMap((value) => index.postingsFor(facet, value) ?? []),
  )
  if (query.q !== undefined) {
    const terms = text.termPostings(query.q)
    if (terms === undefined) return NOTHING
    steps.push(...terms)
  }
  return steps.length === 0 ? undefined : steps
}

/** The per-job (non-membership) filters of a query, resolved against `now`. */
interface JobFilters {
  /** False when no job can fail them: then they are not checked at all. */
  any: boolean
  /** False until the first expiry: nothing in a fresh snapshot needs the check. */
  checkExpiry: boolean
  now: number
  postedSince: number
  checkSalary: boolean
  salaryMin: number
  salaryMax: number
}

function jobFilters(index: JobIndex, query: V2ListQuery, now: number): JobFilters {
  const checkExpiry = now >= index.firstExpiry
  const postedSince = query.posted_after ? now - query.posted_after * DAY_MS : -Infinity
  const checkSalary = query.salary_min !== undefined || query.salary_max !== undefined
  return {
    any: checkExpiry || postedSince > -Infinity || checkSalary,
    checkExpiry,
    now,
    postedSince,
    checkSalary,
    salaryMin: query.salary_min ?? -Infinity,
    salaryMax: query.salary_max ?? Infinity,
  }
}

function passes(index: RangeColumns, f: JobFilters, p: number): boolean {
  if (f.checkExpiry && index.expiresAt[p]! <= f.now) return false
  if (index.postedAt[p]! < f.postedSince) return false
  if (f.checkSalary) {
    const low = index.salaryLow[p]!
    if (Number.isNaN(low) || index.salaryHigh[p]! < f.salaryMin || low > f.salaryMax) return false
  }
  return true
}

/**
 * Runs a v2 list query. `extraGroups` adds facet filters the REST API does
 * not expose (the MCP tools' employer filters) under the same AND/OR rules.
 *
 * Membership (filters, `q`) marks the matches in a byte mask, applying the
 * per-job filters to those matches only, which also counts them: the total
 * is known before any page is read. The page is then a walk of the
 * requested order (positions are date ranks; salary walks the precomputed
 * salary order) that stops as soon as the page is full. Nothing is sorted
 * per query.
 */
export function runV2Query(context: QueryContext, query: V2ListQuery, extraGroups: [Facet, string[]][] = []): QueryResult {
  const { index, now } = context
  const filters = jobFilters(index, query, now)
  const start = (query.page - 1) * query.limit
  const end = start + query.limit
  const bySalary = query.sort === 'salary'
  const steps = membershipSteps(context, query, extraGroups)
  if (steps === NOTHING) return { total: 0, positions: [] }

  const positions: number[] = []
  if (steps === undefined) {
    // Every job is a member: with no per-job filter the page is a slice of the order.
    if (!filters.any) {
      for (let i = start; i < Math.min(end, index.size); i++) positions.push(bySalary ? index.salaryOrder[i]! : i)
      return { total: index.size, positions }
    }
    // The walk: i is a date position, or a salary rank whose columns are stored in that order.
    const columns = bySalary ? index.bySalary : index.byDate
    let total = 0
    for (let i = 0; i < index.size; i++) {
      // Date positions are newest first: past the first too old for posted_after, every job is.
      if (!bySalary && columns.postedAt[i]! < filters.postedSince) break
      if (!passes(columns, filters, i)) continue
      if (total >= start && total < end) positions.push(bySalary ? index.salaryOrder[i]! : i)
      total++
    }
    return { total, positions }
  }

  const { mask, matched, count } = markEveryStep(steps, index.size, filters.any ? (p) => passes(index.byDate, filters, p) : undefined)
  const wanted = Math.min(end, count)
  let seen = 0
  if (bySalary) {
    const order = index.salaryOrder
    for (let rank = 0; seen < wanted; rank++) {
      const p = order[rank]!
      if (mask[p] !== matched) continue
      if (seen >= start) positions.push(p)
      seen++
    }
  } else {
    for (let p = 0; seen < wanted; p++) {
      if (mask[p] !== matched) continue
      if (seen >= start) positions.push(p)
      seen++
    }
  }
  return { total: count, positions }
}

/** Live positions in date order, for pages composed at request time (v1 after an expiry). */
export function livePositions(index: JobIndex, now: number): number[] {
  const live: number[] = []
  for (let p = 0; p < index.size; p++) if (index.expiresAt[p]! > now) live.push(p)
  return live
}
