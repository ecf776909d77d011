/**
 * Completion values for prompt and resource-template arguments (MCP completes
 * those, not tool arguments): the known values that start with what was typed,
 * at most 100 as the protocol allows, with the total when there are more.
 */

/** The protocol's cap on values in one completion result. */
const MAX_VALUES = 100

export interface Completion {
  values: string[]
  /** Absent when counting would mean scanning further than the values shown. */
  total?: number
  hasMore: boolean
}

/** Values of `vocabulary` starting with `typed` (case-insensitive), in the vocabulary's order. */
export function completeFrom(vocabulary: Iterable<string>, typed: string): Completion {
  const prefix = typed.trim().toLowerCase()
  const values: string[] = []
  let total = 0
  for (const value of vocabulary) {
    if (!value.toLowerCase().startsWith(prefix)) continue
    total++
    if (values.length < MAX_VALUES) values.push(value)
  }
  return { values, total, hasMore: total > values.length }
}

/** The same over a code-point-sorted array, by binary search: for the slugs of a million jobs. */
export function completeFromSorted(
  sorted: readonly string[],
  typed: string,
  keep: (value: string) => boolean,
): Completion {
  const prefix = typed.trim().toLowerCase()
  let low = 0
  let high = sorted.length
  while (low < high) {
    const middle = (low + high) >>> 1
    if (sorted[middle]! < prefix) low = middle + 1
    else high = middle
  }
  const values: string[] = []
  let scanned = 0
  for (let i = low; i < sorted.length && sorted[i]!.startsWith(prefix); i++) {
    scanned++
    if (!keep(sorted[i]!)) continue
    values.push(sorted[i]!)
    if (values.length === MAX_VALUES) break
  }
  const more = low + scanned < sorted.length && sorted[low + scanned]!.startsWith(prefix)
  return more ? { values, hasMore: true } : { values, total: values.length, hasMore: false }
}
