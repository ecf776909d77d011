/**
 * Executes a parsed v2 list query against a JobIndex. Pure: no I/O, no
 * clock (the caller passes `now`). Cost: one walk of each posting list the
 * query names, per-job checks on its matches only, and a walk of the sort
 * order that stops when the page is full.
 */
import { countryContinents, regionsOfCountry, resolveCountry } from '../../core/geo.ts'
import type { V2ListQuery } from '../../core/query.ts'
import { placeKey } from '../../core/snapshot.ts'
import {
  andInto,
  clearFrom,
  countBits,
  hasBit,
  matchEveryStep,
  setBelow,
  setPositionsFrom,
  setPositionsInRange,
  type Step,
} from './intersect.ts'
import type { Facet, JobIndex } from './job-index.ts'
import { dateStart, firstFailing, salaryStart } from './seek.ts'
import type { TextIndex } from './text-index.ts'

const DAY_MS = 86_400_000

export interface QueryResult {
  total: number
  /** Positions on the requested page, in order. */
  positions: number[]
  /** Whether some match follows the page (then its last job's cursor continues the list). */
  more: boolean
}

/** The location keys a country answers to: itself, its continent, every region containing it (Worldwide too). */
export function placeKeysForCountry(country: string): string[] {
  const code = resolveCountry(country)
  if (!code) return []
  return [
    placeKey.country(code),
    ...countryContinents(code).map(placeKey.continent),
    ...regionsOfCountry(code).map(placeKey.region),
  ]
}

/** The location key of an office in a country (office_country), or undefined for no country. */
function officeKeyForCountry(country: string): string | undefined {
  const code = resolveCountry(country)
  return code && placeKey.office(code)
}

/**
 * Filter groups: a job must be in at least one posting list of every group.
 * Values are de-duplicated: each posting list is walked once per group, so a
 * URL repeating one value thousands of times (`country=de,de,de,...`, or many
 * countries sharing a continent and region) costs no more than naming it once.
 */
export function filterGroups(
  query: V2ListQuery,
  companyIdOf: (slug: string) => string | undefined,
): [Facet, string[]][] {
  const groups: [Facet, string[]][] = []
  const push = (facet: Facet, values: string[]) => {
    if (values.length) groups.push([facet, [...new Set(values)]])
  }
  push('category', query.category)
  push('level', query.level)
  push('schedule', query.schedule)
  push('work_arrangement', query.work_arrangement)
  push('tag', query.skills)
  // Companies are named by slug and indexed by id; an unknown slug still filters (to nothing).
  if (query.company.length)
    groups.push(['company', [...new Set(query.company.flatMap((slug) => companyIdOf(slug) ?? []))]])
  // A country list that resolves to no place still filters (to nothing), as before.
  if (query.country.length)
    groups.push(['place', [...new Set([...new Set(query.country)].flatMap(placeKeysForCountry))]])
  if (query.office_country.length)
    groups.push(['place', [...new Set(query.office_country.flatMap((c) => officeKeyForCountry(c) ?? []))]])
  return groups
}

export interface QueryContext {
  index: JobIndex
  text: TextIndex
  now: number
  /** A company slug's id (the company facet is keyed by id). */
  companyIdOf(slug: string): string | undefined
  /** A company id's slug, for facet counts named as the filter takes them. */
  companySlugOf(id: string): string | undefined
}

/** A `q` term that matches no vocabulary term: the query matches nothing. */
const NOTHING = 'nothing'

/** The membership steps of a query (filter groups, then `q` terms); undefined when nothing restricts by membership. */
function membershipSteps(
  { index, text, companyIdOf }: QueryContext,
  query: V2ListQuery,
  extraGroups: [Facet, string[]][],
): Step[] | undefined | typeof NOTHING {
  const steps: Step[] = [...filterGroups(query, companyIdOf), ...extraGroups].map(([facet, values]) => ({
    lists: values.flatMap((value) => index.postingsFor(facet, value) ?? []),
  }))
  if (query.q !== undefined) {
    const terms = text.termPostings(query.q)
    if (terms === undefined) return NOTHING
    for (const lists of terms) steps.push({ lists })
  }
  return steps.length === 0 ? undefined : steps
}

/** The salary bounds of a query (whole USD a year), or undefined when it sets none. */
function salaryBounds(query: V2ListQuery): { min: number; max: number } | undefined {
  if (query.salary_min === undefined && query.salary_max === undefined) return undefined
  return { min: query.salary_min ?? -Infinity, max: query.salary_max ?? Infinity }
}

/**
 * With nothing else to narrow by, a salary filter keeps a prefix of an
 * order (binary search), and that prefix is a posting list like any other:
 * salary_min of the salary order (highest top of range first), salary_max
 * of the order by bottom of range (lowest first). Jobs without salary end
 * both orders, so either filter leaves them out.
 */
function salarySteps(index: JobIndex, salary: { min: number; max: number }): Step[] {
  const prefixes: Uint32Array[] = []
  if (salary.min > -Infinity)
    prefixes.push(
      index.salaryOrder.subarray(
        0,
        firstFailing(index.size, (rank) => index.bySalary.salaryHigh[rank]! >= salary.min),
      ),
    )
  if (salary.max < Infinity) {
    const { order, lows } = index.salaryLowOrder()
    prefixes.push(
      order.subarray(
        0,
        firstFailing(index.size, (rank) => lows[rank]! <= salary.max),
      ),
    )
  }
  return prefixes.map((prefix) => ({ lists: [prefix], once: true }))
}

/** Clears the matches outside the salary bounds (no salary: outside any). A loop, not a callback per match: this runs on every match. */
function keepSalaries(index: JobIndex, bits: Uint32Array, salary: { min: number; max: number }): void {
  const { salaryLow, salaryHigh } = index
  const { min, max } = salary
  for (let w = 0; w < bits.length; w++) {
    let word = bits[w]!
    let kept = word
    while (word !== 0) {
      const bit = word & -word
      word ^= bit
      const p = (w << 5) | (31 - Math.clz32(bit))
      const low = salaryLow[p]!
      if (Number.isNaN(low) || salaryHigh[p]! < min || low > max) kept ^= bit
    }
    bits[w] = kept
  }
}

/**
 * Runs a v2 list query. `extraGroups` adds facet filters the REST API does
 * not expose (the MCP tools' employer filters) under the same AND/OR rules.
 *
 * Filters and `q` terms are steps of one bitset intersection
 * (runtime/query/intersect.ts). posted_after keeps the newest positions,
 * so it cuts the bitset at one position; the salary bounds are checked on
 * the matches left (or, alone, are prefix steps); once some jobs have
 * expired since the build, the live ones are one more bitset. Counting
 * bits gives the total before any page is read. The page is then a walk of
 * the requested order (positions are date ranks; salary walks the
 * precomputed salary order) that stops as soon as the page is full.
 * Nothing is sorted per query but a few salary ranks.
 */
export function runV2Query(
  context: QueryContext,
  query: V2ListQuery,
  extraGroups: [Facet, string[]][] = [],
): QueryResult {
  try {
    return matchAndPage(context, query, extraGroups)
  } finally {
    context.index.bitsets.returnScratch()
  }
}

function copyOf(bits: Uint32Array, index: JobIndex): Uint32Array {
  const copy = index.bitsets.scratch()
  copy.set(bits)
  return copy
}

/**
 * What a query matches: a bitset and its count, or (`bits` undefined) every
 * position below `below`, when nothing but posted_after restricts a snapshot
 * where nothing has expired: then no bitset is made at all.
 */
interface Matches {
  bits?: Uint32Array
  count: number
  below: number
}

function match(context: QueryContext, query: V2ListQuery, extraGroups: [Facet, string[]][]): Matches {
  const { index, now } = context
  const membership = membershipSteps(context, query, extraGroups)
  if (membership === NOTHING) return { bits: index.bitsets.scratch(), count: 0, below: 0 }
  const steps = membership ?? []
  const salary = salaryBounds(query)
  const salaryAsSteps = salary !== undefined && steps.length === 0
  if (salaryAsSteps) steps.push(...salarySteps(index, salary))
  // Date positions are newest first: posted_after keeps those below one position.
  const since = query.posted_after ? now - query.posted_after * DAY_MS : undefined
  const below = since === undefined ? index.size : firstFailing(index.size, (p) => index.postedAt[p]! >= since)
  // Nothing in a fresh snapshot has expired: until the first expiry nothing is checked.
  const live = now >= index.firstExpiry ? index.liveBits(now) : undefined
  if (steps.length === 0 && live === undefined) return { count: below, below }

  const bits =
    steps.length > 0
      ? matchEveryStep(steps, index.bitsets)
      : live
        ? copyOf(live.bits, index)
        : setBelow(index.bitsets.scratch(), index.size)
  if (live && steps.length > 0) andInto(bits, live.bits)
  if (below < index.size) clearFrom(bits, below)
  let count = countBits(bits)
  if (salary && !salaryAsSteps) {
    // Whichever is fewer: check each match's salary, or set the bits of the salary prefixes.
    const prefixes = salarySteps(index, salary)
    if (count <= prefixes.reduce((sum, step) => sum + step.lists[0]!.length, 0)) keepSalaries(index, bits, salary)
    else andInto(bits, matchEveryStep(prefixes, index.bitsets))
    count = countBits(bits)
  }
  return { bits, count, below }
}

/**
 * Every position `query` matches, as a bitset lent from the index's scratch
 * (valid until `index.bitsets.returnScratch()`, which the caller owes).
 */
export function matchingBits(context: QueryContext, query: V2ListQuery): { bits: Uint32Array; count: number } {
  const { bits, count, below } = match(context, query, [])
  return { bits: bits ?? setBelow(context.index.bitsets.scratch(), below), count }
}

function matchAndPage(context: QueryContext, query: V2ListQuery, extraGroups: [Facet, string[]][]): QueryResult {
  const matches = match(context, query, extraGroups)
  if (query.cursor) return pageAfterCursor(context.index, query, matches)
  const { positions, total } = pageByNumber(context.index, query, matches)
  return { total, positions, more: query.page * query.limit < total }
}

function pageByNumber(index: JobIndex, query: V2ListQuery, matches: Matches): Omit<QueryResult, 'more'> {
  const start = (query.page - 1) * query.limit
  const end = start + query.limit
  const bySalary = query.sort === 'salary'
  const positions: number[] = []
  if (matches.bits === undefined) {
    // Every job up to `below` matches: the page is a slice of the order.
    const { below } = matches
    if (!bySalary) {
      for (let p = start; p < Math.min(end, below); p++) positions.push(p)
      return { total: below, positions }
    }
    if (below === index.size) {
      for (let rank = start; rank < Math.min(end, index.size); rank++) positions.push(index.salaryOrder[rank]!)
      return { total: index.size, positions }
    }
  }
  const bits = matches.bits ?? setBelow(index.bitsets.scratch(), matches.below)
  const count = matches.count
  const wanted = Math.min(end, count)
  if (!bySalary) return { total: count, positions: setPositionsInRange(bits, start, wanted) }
  // Walking the salary order visits about wanted * size / count ranks (matches spread evenly); sorting
  // the matches' ranks costs about count * log2(count). Few matches far apart: sort; otherwise walk.
  if (wanted * (index.size / count) > count * Math.log2(count + 1)) {
    const ranks = sortedSalaryRanks(index, bits, count)
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

/** The salary ranks of the matches, ascending. */
function sortedSalaryRanks(index: JobIndex, bits: Uint32Array, count: number): Uint32Array {
  const matched = setPositionsInRange(bits, 0, count)
  // A plain loop: Uint32Array.from with a map function goes through the iterator protocol, ~10x slower.
  const ranks = new Uint32Array(count)
  for (let i = 0; i < count; i++) ranks[i] = index.salaryRank[matched[i]!]!
  return ranks.sort()
}

/**
 * A page asked for by cursor: the matches after the cursor's position in
 * the sort order, found by binary search (seek.ts), then the same walks as
 * a first page. One match more than the page is looked for: whether it
 * exists is `more`. `total` still counts every match of the filters.
 */
function pageAfterCursor(index: JobIndex, query: V2ListQuery, matches: Matches): QueryResult {
  const cursor = query.cursor!
  const wanted = query.limit + 1
  const total = matches.count
  const page = (positions: number[]): QueryResult => ({
    total,
    positions: positions.slice(0, query.limit),
    more: positions.length > query.limit,
  })
  const positions: number[] = []
  if (cursor.sort === 'date') {
    const start = dateStart(index, cursor)
    if (matches.bits === undefined) {
      for (let p = start; p < Math.min(start + wanted, matches.below); p++) positions.push(p)
      return page(positions)
    }
    return page(setPositionsFrom(matches.bits, start, wanted))
  }
  const from = salaryStart(index, cursor)
  const order = index.salaryOrder
  if (matches.bits === undefined && matches.below === index.size) {
    for (let rank = from; rank < Math.min(from + wanted, index.size); rank++) positions.push(order[rank]!)
    return page(positions)
  }
  if (total === 0) return page(positions)
  const bits = matches.bits ?? setBelow(index.bitsets.scratch(), matches.below)
  // As for a page by number: walk the order from the cursor, or sort the matches' ranks and search them.
  const left = index.size - from
  if (Math.min(left, wanted * (index.size / total)) > total * Math.log2(total + 1)) {
    const ranks = sortedSalaryRanks(index, bits, total)
    for (let i = firstAtLeast(ranks, from); i < ranks.length && positions.length < wanted; i++)
      positions.push(order[ranks[i]!]!)
    return page(positions)
  }
  for (let rank = from; rank < index.size && positions.length < wanted; rank++) {
    const p = order[rank]!
    if (hasBit(bits, p)) positions.push(p)
  }
  return page(positions)
}

/** The first index of an ascending array whose value is at least `value`. */
function firstAtLeast(sorted: Uint32Array, value: number): number {
  return firstFailing(sorted.length, (i) => sorted[i]! < value)
}

/** Live positions in date order, for pages composed at request time (v1 after an expiry). */
export function livePositions(index: JobIndex, now: number): number[] {
  const live: number[] = []
  for (let p = 0; p < index.size; p++) if (index.expiresAt[p]! > now) live.push(p)
  return live
}
