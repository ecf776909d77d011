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
  andAllCount,
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
 * A salary filter keeps a prefix of an order (binary search): salary_min of
 * the salary order (highest top of range first), salary_max of the order by
 * bottom of range (lowest first). Jobs without salary end both orders, so
 * either filter leaves them out. Each prefix is a bitset lent for the
 * query (PrefixBits: a kept checkpoint and a few positions either side).
 */
function salaryPrefixBits(index: JobIndex, salary: { min: number; max: number }): Uint32Array[] {
  const { high, low } = index.salaryPrefixes()
  const prefixes: Uint32Array[] = []
  if (salary.min > -Infinity) {
    const length = firstFailing(index.size, (rank) => index.bySalary.salaryHigh[rank]! >= salary.min)
    prefixes.push(high.fill(index.bitsets.scratch(false), length))
  }
  if (salary.max < Infinity) {
    const { lows } = index.salaryLowOrder()
    const length = firstFailing(index.size, (rank) => lows[rank]! <= salary.max)
    prefixes.push(low.fill(index.bitsets.scratch(false), length))
  }
  return prefixes
}

/** Clears the matches outside the salary bounds (no salary: outside any). A loop, not a callback per match: this runs on every match. */
function keepSalaries(index: JobIndex, bits: Uint32Array, salary: { min: number; max: number }, words: number): void {
  const { salaryLow, salaryHigh } = index
  const { min, max } = salary
  for (let w = 0; w < words; w++) {
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
 * so it cuts the bitset at one position (and no word past it is computed);
 * the salary bounds are checked on the matches left when they are few, or
 * ANDed in as bitsets of salary-order prefixes (runtime/query/prefix-bits.ts);
 * once some jobs have expired since the build, the live ones are one more bitset. Counting
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

/**
 * Below this many matches (a fraction of the positions), the salary bounds are checked match by match
 * (two scattered reads each, ~50 ns at 1M jobs); above, each bound is one bitset AND (a copy and
 * passes over size/32 words, ~100 us at 1M jobs).
 */
const CHECK_EACH_SALARY_SHARE = 1 / 512

function match(context: QueryContext, query: V2ListQuery, extraGroups: [Facet, string[]][]): Matches {
  const { index, now } = context
  const membership = membershipSteps(context, query, extraGroups)
  if (membership === NOTHING) return { bits: index.bitsets.scratch(), count: 0, below: 0 }
  const steps = membership ?? []
  const salary = salaryBounds(query)
  // Date positions are newest first: posted_after keeps those below one position.
  const since = query.posted_after ? now - query.posted_after * DAY_MS : undefined
  const below = since === undefined ? index.size : firstFailing(index.size, (p) => index.postedAt[p]! >= since)
  // Nothing in a fresh snapshot has expired: until the first expiry nothing is checked.
  const live = now >= index.firstExpiry ? index.liveBits(now) : undefined
  if (steps.length === 0 && live === undefined && salary === undefined) return { count: below, below }

  // Only the words holding positions below `below` are ever computed; the others stay zero.
  const words = (below + 31) >>> 5
  // Few matches at most (the shortest step): their salaries are checked one by one; else the prefixes are ANDed.
  const checkEach =
    salary !== undefined &&
    steps.length > 0 &&
    Math.min(...steps.map((step) => totalLength(step.lists))) <= index.size * CHECK_EACH_SALARY_SHARE
  // Bitsets ANDed into the matches in the pass that counts them: the salary prefixes (lent, writable), the live jobs.
  const also = salary && !checkEach ? salaryPrefixBits(index, salary) : []
  if (live) also.push(live.bits)
  let bits: Uint32Array
  if (steps.length > 0) bits = matchEveryStep(steps, index.bitsets, below)
  else if (also.length > 1 || (also.length === 1 && !live)) bits = also.shift()!
  else if (live) bits = copyOf(also.shift()!, index)
  else bits = setBelow(index.bitsets.scratch(), below)
  if (below < index.size) clearFrom(bits, below)
  let count = andAllCount(bits, also, words, index.bitsets)
  if (checkEach) {
    keepSalaries(index, bits, salary, words)
    count = countBits(bits, index.bitsets, words)
  }
  return { bits, count, below }
}

function totalLength(lists: readonly Uint32Array[]): number {
  let n = 0
  for (const list of lists) n += list.length
  return n
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
  return { total: count, positions: bySalaryRank(index, bits, count, wordsOf(matches), 0, start, wanted) }
}

const wordsOf = (matches: Matches) => (matches.below + 31) >>> 5

/**
 * Walks the salary order from `rank`, collecting the `skip`-th to before
 * the `end`-th match; undefined when `budget` ranks were walked first.
 */
function walkBySalary(
  index: JobIndex,
  bits: Uint32Array,
  rank: number,
  skip: number,
  end: number,
  budget: number,
): number[] | undefined {
  const order = index.salaryOrder
  const stop = Math.min(index.size, rank + budget)
  const positions: number[] = []
  let seen = 0
  for (; rank < stop && seen < end; rank++) {
    const p = order[rank]!
    if (!hasBit(bits, p)) continue
    if (seen >= skip) positions.push(p)
    seen++
  }
  return seen >= end || rank >= index.size ? positions : undefined
}

/**
 * The matches from salary rank `from` on, in salary order: the `skip`-th to
 * before the `end`-th of them. Walking the salary order visits about
 * end * size / count ranks when the matches are spread evenly, but every
 * rank up to the page when they sit at one end of it (interns and the
 * lowest salaries); selecting the smallest ranks of the matches costs a
 * pass over them, a scattered read each (some 6 ranks' walk, measured at
 * 1M jobs). For a page from the top, how far the walk would go is known
 * beforehand from AND-counts with kept prefixes of the salary order
 * (PrefixBits), doubling from twice the walk expected; after a cursor, the walk is tried when it looks
 * cheaper and given up once it has cost what the selection would.
 */
function bySalaryRank(
  index: JobIndex,
  bits: Uint32Array,
  count: number,
  words: number,
  from: number,
  skip: number,
  end: number,
): number[] {
  if (end <= skip || count === 0) return []
  const expected = end * (index.size / count)
  const selection = SELECT_COST_IN_RANKS * count + words
  if (from === 0) {
    // Dense matches: a short walk. Otherwise walk only a prefix of the order that one AND-count says holds the page.
    const walked = expected <= SHORT_WALK / 4 ? walkBySalary(index, bits, 0, skip, end, SHORT_WALK) : undefined
    if (walked) return walked
    const prefixes = index.salaryPrefixes().high
    // Prefixes twice the walk expected, then doubling, while walking them costs less than selecting.
    for (let k = Math.ceil((2 * expected) / prefixes.stride); ; k *= 2) {
      const last = Math.min(k, prefixes.checkpoints)
      if (last * prefixes.stride > selection) break
      if (prefixes.countIn(bits, last, words) >= end) return walkBySalary(index, bits, 0, skip, end, Infinity)!
      if (last === prefixes.checkpoints) break
    }
  } else if (expected <= selection) {
    const walked = walkBySalary(index, bits, from, skip, end, selection)
    if (walked) return walked
  }
  const order = index.salaryOrder
  const ranks = smallestRanks(index, bits, words, from, end)
  const positions: number[] = []
  for (let i = skip; i < ranks.length; i++) positions.push(order[ranks[i]!]!)
  return positions
}

/** What selecting by rank costs per match, in ranks of a walk of the salary order. */
const SELECT_COST_IN_RANKS = 6

/** Ranks a page from the top walks before anything else is tried. */
const SHORT_WALK = 4096

/** Counts of match ranks per bucket of ranks, reused (a query runs synchronously). */
const HISTOGRAM = new Uint32Array(1024)

/**
 * The `end` smallest salary ranks at or after `from` of the matches,
 * ascending. One pass collects the matches' ranks and counts them in 1,024
 * buckets of ranks; only those in the buckets up to the one holding the
 * `end`-th are sorted, not every match.
 */
function smallestRanks(index: JobIndex, bits: Uint32Array, words: number, from: number, end: number): Uint32Array {
  const { salaryRank, size } = index
  const ranks = index.bitsets.rankBuffer()
  const shift = Math.max(0, 32 - Math.clz32(Math.max(1, size - 1)) - 10)
  const histogram = HISTOGRAM.fill(0)
  let n = 0
  for (let w = 0; w < words; w++) {
    // `| 0`: a word with its top bit set is a negative int32, not a heap number (a uint32 above 2^31).
    let word = bits[w]! | 0
    while (word !== 0) {
      const bit = word & -word
      word ^= bit
      const rank = salaryRank[(w << 5) | (31 - Math.clz32(bit))]!
      if (rank < from) continue
      ranks[n++] = rank
      histogram[rank >>> shift]!++
    }
  }
  let cutoff = size
  for (let b = 0, seen = 0; b < histogram.length; b++) {
    seen += histogram[b]!
    if (seen >= end) {
      cutoff = (b + 1) << shift
      break
    }
  }
  let kept = 0
  for (let i = 0; i < n; i++) if (ranks[i]! < cutoff) ranks[kept++] = ranks[i]!
  return ranks.subarray(0, kept).sort().subarray(0, end)
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
  const bits = matches.bits ?? setBelow(index.bitsets.scratch(), matches.below)
  return page(bySalaryRank(index, bits, total, wordsOf(matches), from, 0, wanted))
}

/** Live positions in date order, for pages composed at request time (v1 after an expiry). */
export function livePositions(index: JobIndex, now: number): number[] {
  const live: number[] = []
  for (let p = 0; p < index.size; p++) if (index.expiresAt[p]! > now) live.push(p)
  return live
}
