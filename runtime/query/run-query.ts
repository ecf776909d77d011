/**
 * Executes a parsed v2 list query against a JobIndex. Pure: no I/O, no
 * clock (the caller passes `now`). Cost: one walk of each posting list the
 * query names, per-job checks on its matches only, and a walk of the sort
 * order that stops when the page is full.
 */
import { countryContinent, regionsOfCountry, resolveCountry } from '../../core/geo.ts'
import type { V2ListQuery } from '../../core/query.ts'
import { placeKey } from '../../core/snapshot.ts'
import { hasBit, matchEveryStep, setPositionsInRange, type Step } from './intersect.ts'
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

/** A `q` term that matches no vocabulary term: the query matches nothing. */
const NOTHING = 'nothing'

/** The membership steps of a query (filter groups, then `q` terms); undefined when nothing restricts by membership. */
function membershipSteps({ index, text }: QueryContext, query: V2ListQuery, extraGroups: [Facet, string[]][]): Step[] | undefined | typeof NOTHING {
  const steps: Step[] = [...filterGroups(query), ...extraGroups].map(([facet, values]) => ({
    lists: values.flatMap((value) => index.postingsFor(facet, value) ?? []),
  }))
  if (query.q !== undefined) {
    const terms = text.termPostings(query.q)
    if (terms === undefined) return NOTHING
    for (const lists of terms) steps.push({ lists })
  }
  return steps.length === 0 ? undefined : steps
}

/**
 * Each range filter keeps a prefix of an order, found by binary search, and
 * that prefix is a posting list like any other: posted_after of the date
 * order (newest first), salary_min of the salary order (highest top of
 * range first), salary_max of the order by bottom of range (lowest first).
 * Jobs without salary end both salary orders, so either salary filter
 * leaves them out.
 */
function rangeSteps(index: JobIndex, query: V2ListQuery, now: number): Step[] {
  const prefixes: Uint32Array[] = []
  if (query.posted_after) {
    const since = now - query.posted_after * DAY_MS
    prefixes.push(index.dateOrder.subarray(0, firstFailing(index.size, (p) => index.postedAt[p]! >= since)))
  }
  if (query.salary_min !== undefined) {
    const min = query.salary_min
    prefixes.push(index.salaryOrder.subarray(0, firstFailing(index.size, (rank) => index.bySalary.salaryHigh[rank]! >= min)))
  }
  if (query.salary_max !== undefined) {
    const max = query.salary_max
    const { order, lows } = index.salaryLowOrder()
    prefixes.push(order.subarray(0, firstFailing(index.size, (rank) => lows[rank]! <= max)))
  }
  return prefixes.map((prefix) => ({ lists: [prefix], once: true }))
}

/** The first index in [0, size) where `holds` turns false (it holds on a prefix only). */
function firstFailing(size: number, holds: (i: number) => boolean): number {
  let low = 0
  let high = size
  while (low < high) {
    const mid = (low + high) >>> 1
    if (holds(mid)) low = mid + 1
    else high = mid
  }
  return low
}

/**
 * Runs a v2 list query. `extraGroups` adds facet filters the REST API does
 * not expose (the MCP tools' employer filters) under the same AND/OR rules.
 *
 * Filters, `q` terms and range filters are all steps of one bitset
 * intersection (runtime/query/intersect.ts), with the jobs still live once
 * some have expired since the build; counting its bits gives the total
 * before any page is read. The page is then a walk of the requested order (positions
 * are date ranks; salary walks the precomputed salary order) that stops as
 * soon as the page is full. Nothing is sorted per query.
 */
export function runV2Query(context: QueryContext, query: V2ListQuery, extraGroups: [Facet, string[]][] = []): QueryResult {
  const { index, now } = context
  const start = (query.page - 1) * query.limit
  const end = start + query.limit
  const bySalary = query.sort === 'salary'
  const membership = membershipSteps(context, query, extraGroups)
  if (membership === NOTHING) return { total: 0, positions: [] }
  const steps = [...(membership ?? []), ...rangeSteps(index, query, now)]
  // Nothing in a fresh snapshot has expired: until the first expiry nothing is checked.
  const live = now >= index.firstExpiry ? index.liveBits(now) : undefined

  const positions: number[] = []
  if (steps.length === 0 && live === undefined) {
    // Every job matches: the page is a slice of the order.
    for (let i = start; i < Math.min(end, index.size); i++) positions.push(bySalary ? index.salaryOrder[i]! : i)
    return { total: index.size, positions }
  }

  const { bits, count } = steps.length === 0 ? { bits: live!.bits, count: live!.count } : matchEveryStep(steps, index.bitsets, live?.bits)
  const wanted = Math.min(end, count)
  if (!bySalary) return { total: count, positions: setPositionsInRange(bits, start, wanted) }
  if (count * SORT_INSTEAD_OF_WALK < index.size) {
    // Few matches: sorting their salary ranks is cheaper than walking the salary order to find them.
    const ranks = Uint32Array.from(setPositionsInRange(bits, 0, count), (p) => index.salaryRank[p]!).sort()
    for (let i = start; i < wanted; i++) positions.push(index.salaryOrder[ranks[i]!]!)
    return { total: count, positions }
  }
  const order = index.salaryOrder
  let seen = 0
  for (let rank = 0; seen < wanted; rank++) {
    const p = order[rank]!
    if (!hasBit(bits, p)) continue
    if (seen >= start) positions.push(p)
    seen++
  }
  return { total: count, positions }
}

/** Matches below size / this are sorted by salary rank; above, the salary order is walked. */
const SORT_INSTEAD_OF_WALK = 16

/** Live positions in date order, for pages composed at request time (v1 after an expiry). */
export function livePositions(index: JobIndex, now: number): number[] {
  const live: number[] = []
  for (let p = 0; p < index.size; p++) if (index.expiresAt[p]! > now) live.push(p)
  return live
}
