/**
 * Facet counts for the v2 list (`facets=category,skills,...`): for each named
 * filter, how many jobs each of its values would leave. Disjunctive, as
 * faceted-search engines count: a facet is counted with every other filter
 * of the query applied but not its own, so a UI can offer the alternatives to
 * what is already chosen. Counts are bit operations on the matches of the
 * query (or of the query without that facet's filter), never a walk of jobs.
 */
import { FACET_NAMES, type FacetName, type V2ListQuery } from '../../core/query.ts'
import { resolveCountry } from '../../core/geo.ts'
import { SCHEDULE_TYPE_VALUES, WORK_ARRANGEMENTS } from '../../core/taxonomy.ts'
import { countBitsAnd, hasBit, orInto } from './intersect.ts'
import type { Facet, JobIndex } from './job-index.ts'
import { matchingBits, placeKeysForCountry, type QueryContext } from './run-query.ts'

/** Values listed per facet, most jobs first: a company or skill facet could otherwise run to thousands. */
const FACET_VALUES_MAX = 100

export type FacetCounts = Partial<Record<FacetName, Record<string, number>>>

/** Each value the facet can take, as the filter is written, with the posting lists whose union is its jobs. */
function valuesOf(context: QueryContext, name: FacetName): { value: string; lists: Uint32Array[] }[] {
  const { index } = context
  const single = (facet: Facet, values: readonly string[], shown: (value: string) => string | undefined = (v) => v) =>
    values.flatMap((value) => {
      const list = index.postingsFor(facet, value)
      const label = shown(value)
      return list && label !== undefined ? [{ value: label, lists: [list] }] : []
    })
  switch (name) {
    case 'category':
    case 'level':
      return single(name, index.valuesOf(name))
    case 'schedule':
      return single('schedule', SCHEDULE_TYPE_VALUES)
    case 'work_arrangement':
      return single('work_arrangement', WORK_ARRANGEMENTS)
    case 'skills':
      return single('tag', index.valuesOf('tag'))
    case 'company':
      return single('company', index.valuesOf('company'), context.companySlugOf)
    case 'country':
      return index.valuesOf('place').flatMap((key) => {
        const code = key.startsWith('c:') ? resolveCountry(key.slice(2)) : undefined
        if (!code) return []
        const lists = placeKeysForCountry(code).flatMap((k) => index.postingsFor('place', k) ?? [])
        return [{ value: code, lists }]
      })
    case 'office_country':
      return index.valuesOf('place').flatMap((key) => {
        const code = key.startsWith('o:') ? resolveCountry(key.slice(2)) : undefined
        const list = code && index.postingsFor('place', key)
        return code && list ? [{ value: code, lists: [list] }] : []
      })
  }
}

/** |base ∩ union(lists)|, by the cheapest route: a kept bitset, a walk of one short list, or a union. */
function countIn(context: QueryContext, base: Uint32Array, lists: Uint32Array[], union: Uint32Array): number {
  const { bitsets } = context.index
  if (lists.length === 1) {
    const list = lists[0]!
    const kept = bitsets.bitsOf(list)
    if (kept) return countBitsAnd(base, kept, bitsets)
    let count = 0
    for (let k = 0; k < list.length; k++) if (hasBit(base, list[k]!)) count++
    return count
  }
  union.fill(0)
  for (const list of lists) orInto(union, list, bitsets)
  return countBitsAnd(base, union, bitsets)
}

/**
 * A facet with many values (skills, countries, companies) as a column: the
 * value codes of each position (`codes[starts[p]]` to `codes[starts[p + 1]]`,
 * each value once), its labels, and each label's rank in label order. Made
 * on first use per snapshot, from the same values and lists the probing
 * count uses, so both count the same jobs.
 */
interface FacetColumn {
  labels: string[]
  rank: Uint32Array
  starts: Uint32Array
  codes: Uint32Array
}

/** The facets counted from a column: probing each of their values' lists took ~4 ms (5,000 companies) and ~0.7 ms (skills, countries) a query at 100k jobs. */
const COLUMN_FACETS: ReadonlySet<FacetName> = new Set(['skills', 'country', 'office_country', 'company'])
const columns = new WeakMap<JobIndex, Map<FacetName, FacetColumn>>()

function facetColumn(context: QueryContext, name: FacetName): FacetColumn {
  let byName = columns.get(context.index)
  if (!byName) {
    byName = new Map()
    columns.set(context.index, byName)
  }
  let column = byName.get(name)
  if (column) return column
  const values = valuesOf(context, name)
  const size = context.index.size
  // Two passes over the lists: count each position's values, then place them; `lastCode` keeps a position
  // that two lists of one value hold (a country's places) from counting that value twice.
  const starts = new Uint32Array(size + 1)
  const lastCode = new Int32Array(size).fill(-1)
  const eachPosition = (visit: (position: number, code: number) => void) => {
    lastCode.fill(-1)
    values.forEach(({ lists }, code) => {
      for (const list of lists)
        for (let k = 0; k < list.length; k++) {
          const p = list[k]!
          if (lastCode[p] !== code) {
            lastCode[p] = code
            visit(p, code)
          }
        }
    })
  }
  eachPosition((p) => starts[p + 1]!++)
  for (let p = 0; p < size; p++) starts[p + 1]! += starts[p]!
  const codes = new Uint32Array(starts[size]!)
  const next = starts.slice(0, size)
  eachPosition((p, code) => {
    codes[next[p]!++] = code
  })
  const labels = values.map(({ value }) => value)
  const order = labels
    .map((_, code) => code)
    .sort((a, b) => (labels[a]! < labels[b]! ? -1 : labels[a]! > labels[b]! ? 1 : 0))
  const rank = new Uint32Array(labels.length)
  for (let i = 0; i < order.length; i++) rank[order[i]!] = i
  column = { labels, rank, starts, codes }
  byName.set(name, column)
  return column
}

/** A column facet's counts in one pass over the matches, then the top FACET_VALUES_MAX by count and label. */
function columnFacet(context: QueryContext, name: FacetName, base: Uint32Array): { value: string; count: number }[] {
  const { labels, rank, starts, codes } = facetColumn(context, name)
  const counts = new Uint32Array(labels.length)
  for (let w = 0; w < base.length; w++) {
    let word = base[w]!
    while (word !== 0) {
      const lowest = word & -word
      const p = (w << 5) + 31 - Math.clz32(lowest)
      for (let k = starts[p]!; k < starts[p + 1]!; k++) counts[codes[k]!]!++
      word ^= lowest
    }
  }
  const found: number[] = []
  for (let code = 0; code < counts.length; code++) if (counts[code]! > 0) found.push(code)
  found.sort((a, b) => counts[b]! - counts[a]! || rank[a]! - rank[b]!)
  return found.slice(0, FACET_VALUES_MAX).map((code) => ({ value: labels[code]!, count: counts[code]! }))
}

/**
 * Counts for each named facet over the jobs `query` matches (its own filter
 * on that facet left out). Values with no job are left out; at most
 * FACET_VALUES_MAX per facet, most jobs first, ties by value.
 */
export function facetCounts(context: QueryContext, query: V2ListQuery, names: readonly FacetName[]): FacetCounts {
  const { bitsets } = context.index
  const out: FacetCounts = {}
  try {
    let shared: Uint32Array | undefined
    const union = bitsets.scratch()
    for (const name of FACET_NAMES) {
      if (!names.includes(name)) continue
      // Facets the query does not filter on share one base: the query's own matches.
      let base: Uint32Array
      if (query[name].length > 0) base = matchingBits(context, { ...query, [name]: [] }).bits
      else {
        shared ??= matchingBits(context, query).bits
        base = shared
      }
      const counted = COLUMN_FACETS.has(name)
        ? columnFacet(context, name, base)
        : valuesOf(context, name)
            .map(({ value, lists }) => ({ value, count: countIn(context, base, lists, union) }))
            .filter((entry) => entry.count > 0)
            .sort((a, b) => b.count - a.count || (a.value < b.value ? -1 : a.value > b.value ? 1 : 0))
            .slice(0, FACET_VALUES_MAX)
      out[name] = Object.fromEntries(counted.map(({ value, count }) => [value, count]))
    }
  } finally {
    bitsets.returnScratch()
  }
  return out
}
