/**
 * Executes a parsed v2 list query against a JobIndex. Pure: no I/O, no
 * clock (the caller passes `now`). Cost is O(jobs) per query with a few
 * typed-array reads each, independent of how the filters combine.
 */
import { countryContinent, regionsOfCountry, resolveCountry } from '../../core/geo.ts'
import type { V2ListQuery } from '../../core/query.ts'
import { placeKey } from '../../core/snapshot.ts'
import type { Facet, JobIndex } from './job-index.ts'
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

/** Positions matching every filter (a mask), or undefined when nothing restricts by set membership. */
function membershipMask({ index, text }: QueryContext, query: V2ListQuery, extraGroups: [Facet, string[]][]): Uint8Array | undefined {
  const groups = [...filterGroups(query), ...extraGroups]
  let mask: Uint8Array | undefined
  const intersect = (group: Uint8Array) => {
    if (!mask) mask = group
    else for (let p = 0; p < mask.length; p++) mask[p]! &= group[p]!
  }
  for (const [facet, values] of groups) {
    const group = new Uint8Array(index.size)
    for (const value of values) {
      const postings = index.postingsFor(facet, value)
      if (postings) for (const p of postings) group[p] = 1
    }
    intersect(group)
  }
  if (query.q !== undefined) intersect(text.match(query.q))
  return mask
}

/**
 * Runs a v2 list query. `extraGroups` adds facet filters the REST API does
 * not expose (the MCP tools' employer filters) under the same AND/OR rules.
 */
export function runV2Query(context: QueryContext, query: V2ListQuery, extraGroups: [Facet, string[]][] = []): QueryResult {
  const { index, now } = context
  const mask = membershipMask(context, query, extraGroups)
  const postedSince = query.posted_after ? now - query.posted_after * DAY_MS : -Infinity
  const salaryMin = query.salary_min
  const salaryMax = query.salary_max
  const hasSalaryFilter = salaryMin !== undefined || salaryMax !== undefined
  const start = (query.page - 1) * query.limit
  const end = start + query.limit
  const positions: number[] = []
  let total = 0
  const order = query.sort === 'salary' ? index.salaryOrder : undefined
  for (let i = 0; i < index.size; i++) {
    const p = order ? order[i]! : i
    if (mask && mask[p] === 0) continue
    if (index.expiresAt[p]! <= now) continue
    if (index.postedAt[p]! < postedSince) continue
    if (hasSalaryFilter) {
      const low = index.salaryLow[p]!
      if (Number.isNaN(low)) continue
      if (salaryMin !== undefined && index.salaryHigh[p]! < salaryMin) continue
      if (salaryMax !== undefined && low > salaryMax) continue
    }
    if (total >= start && total < end) positions.push(p)
    total++
  }
  return { total, positions }
}

/** Live positions in date order, for pages composed at request time (v1 after an expiry). */
export function livePositions(index: JobIndex, now: number): number[] {
  const live: number[] = []
  for (let p = 0; p < index.size; p++) if (index.expiresAt[p]! > now) live.push(p)
  return live
}
