/**
 * Executes a parsed v2 list query against a JobIndex. Pure: no I/O, no
 * clock (the caller passes `now`). Cost is O(jobs) per query with a few
 * typed-array reads each, independent of how the filters combine.
 */
import { countryContinent, regionsOfCountry, resolveCountry } from '../../core/geo.ts'
import type { V2ListQuery } from '../../core/query.ts'
import { placeKey } from '../../core/snapshot.ts'
import { positionsInEveryStep } from './intersect.ts'
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

/** Positions passing every filter group and every `q` term, or undefined when nothing restricts by membership. */
function matchingPositions({ index, text }: QueryContext, query: V2ListQuery, extraGroups: [Facet, string[]][]): Uint32Array | undefined {
  const steps: Uint32Array[][] = [...filterGroups(query), ...extraGroups].map(([facet, values]) =>
    values.flatMap((value) => index.postingsFor(facet, value) ?? []),
  )
  if (query.q !== undefined) {
    const terms = text.termPostings(query.q)
    if (terms === undefined) return new Uint32Array(0)
    steps.push(...terms)
  }
  return steps.length === 0 ? undefined : positionsInEveryStep(steps, index.size)
}

/** The per-job (non-membership) filters of a query, resolved against `now`. */
interface JobFilters {
  /** False until the first expiry: nothing in a fresh snapshot needs the check. */
  checkExpiry: boolean
  now: number
  postedSince: number
  checkSalary: boolean
  salaryMin: number
  salaryMax: number
}

function jobFilters(index: JobIndex, query: V2ListQuery, now: number): JobFilters {
  return {
    checkExpiry: now >= index.firstExpiry,
    now,
    postedSince: query.posted_after ? now - query.posted_after * DAY_MS : -Infinity,
    checkSalary: query.salary_min !== undefined || query.salary_max !== undefined,
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
 * Matches are put in order by sorting them (positions are date ranks;
 * salary uses each position's salary rank), unless they are a large share
 * of the snapshot: then one walk of the precomputed order is cheaper.
 */
export function runV2Query(context: QueryContext, query: V2ListQuery, extraGroups: [Facet, string[]][] = []): QueryResult {
  const { index, now } = context
  const matches = matchingPositions(context, query, extraGroups)
  const filters = jobFilters(index, query, now)
  const start = (query.page - 1) * query.limit
  const end = start + query.limit
  const positions: number[] = []
  let total = 0
  const bySalary = query.sort === 'salary'

  let ordered: Uint32Array | undefined
  if (matches !== undefined && matches.length * SORT_INSTEAD_OF_WALK < index.size) {
    if (bySalary) {
      ordered = Uint32Array.from(matches, (p) => index.salaryRank[p]!).sort()
      for (let i = 0; i < ordered.length; i++) ordered[i] = index.salaryOrder[ordered[i]!]!
    } else ordered = matches.sort()
  }
  if (ordered !== undefined) {
    for (let i = 0; i < ordered.length; i++) {
      const p = ordered[i]!
      if (!passes(index.byDate, filters, p)) continue
      if (total >= start && total < end) positions.push(p)
      total++
    }
    return { total, positions }
  }

  // The walk: i is a date position, or a salary rank whose columns are stored in that order.
  const columns = bySalary ? index.bySalary : index.byDate
  let inMatches: Uint8Array | undefined
  if (matches !== undefined) {
    inMatches = new Uint8Array(index.size)
    for (let i = 0; i < matches.length; i++) inMatches[bySalary ? index.salaryRank[matches[i]!]! : matches[i]!] = 1
  }
  for (let i = 0; i < index.size; i++) {
    if (inMatches !== undefined && inMatches[i] === 0) continue
    if (!passes(columns, filters, i)) continue
    if (total >= start && total < end) positions.push(bySalary ? index.salaryOrder[i]! : i)
    total++
  }
  return { total, positions }
}

/** Matches below size / this are sorted; above, the precomputed order is walked. */
const SORT_INSTEAD_OF_WALK = 8

/** Live positions in date order, for pages composed at request time (v1 after an expiry). */
export function livePositions(index: JobIndex, now: number): number[] {
  const live: number[] = []
  for (let p = 0; p < index.size; p++) if (index.expiresAt[p]! > now) live.push(p)
  return live
}
