/**
 * Arrays a job index derives from its columns and orders. The build derives
 * them once and writes them into index/jobs.bin (core/job-index-file.ts), a
 * server derives them at load only for a file without them: at 1M jobs they
 * were ~0.3 s of CPU of every worker's start (a gather or a sort over a
 * million values each). One function per array, used by both, so both give
 * the same arrays.
 */

/** The inverse of the salary order; it must be a permutation of the positions: queries walk it and sort by its inverse. */
export function salaryRankOf(salaryOrder: Uint32Array): Uint32Array {
  const n = salaryOrder.length
  const salaryRank = new Uint32Array(n).fill(n)
  for (let rank = 0; rank < n; rank++) {
    const p = salaryOrder[rank]!
    if (p >= n || salaryRank[p] !== n) throw new Error(`index: salary_order repeats or exceeds position ${p}`)
    salaryRank[p] = rank
  }
  return salaryRank
}

/** `column` read in `order` (a plain loop: Float64Array.from with a map function goes through the iterator protocol, ~10x slower). */
export function inOrder(column: Float64Array, order: Uint32Array): Float64Array {
  const n = order.length
  const ordered = new Float64Array(n)
  for (let rank = 0; rank < n; rank++) ordered[rank] = column[order[rank]!]!
  return ordered
}

/** Every finite expiry, ascending (jobs that never expire are not in it). */
export function sortedExpiries(expiresAt: Float64Array): Float64Array {
  return expiresAt.filter((t) => Number.isFinite(t)).sort()
}

/** The bottoms of the salary ranges in salary-low order, +Infinity for a job without salary. */
export function lowestSalaries(salaryLow: Float64Array, salaryLowOrder: Uint32Array): Float64Array {
  const n = salaryLowOrder.length
  const lows = new Float64Array(n)
  for (let rank = 0; rank < n; rank++) {
    const low = salaryLow[salaryLowOrder[rank]!]!
    lows[rank] = Number.isNaN(low) ? Infinity : low
  }
  return lows
}

/**
 * Positions 0..n-1 ordered by `keys` (ascending, or descending when asked),
 * ties by position, NaN last either way: the order a callback sort by key then
 * position gives, at a third of its cost (~0.1 s for 1M keys, against ~0.25-0.6
 * s by callback, twice per 1M build on its own thread). Each key's rank among
 * the distinct keys (sorted natively), then a counting sort by rank, which
 * keeps positions ascending within a rank.
 */
export function orderByKey(keys: Float64Array, descending = false): Uint32Array {
  const n = keys.length
  // Distinct keys ascending, NaN (which the native sort puts last) left out.
  const distinct = keys.slice().sort()
  let kept = 0
  for (let at = 0; at < n && !Number.isNaN(distinct[at]!); at++)
    if (kept === 0 || distinct[at] !== distinct[kept - 1]) distinct[kept++] = distinct[at]!
  const ranks = new Uint32Array(n)
  // Where each rank's positions start in the order (NaN's rank is `kept`, after every other).
  const starts = new Uint32Array(kept + 2)
  for (let p = 0; p < n; p++) {
    const key = keys[p]!
    let rank = kept
    if (!Number.isNaN(key)) {
      let low = 0
      let high = kept - 1
      while (low < high) {
        const middle = (low + high) >>> 1
        if (distinct[middle]! < key) low = middle + 1
        else high = middle
      }
      rank = descending ? kept - 1 - low : low
    }
    ranks[p] = rank
    starts[rank + 1]!++
  }
  for (let rank = 1; rank <= kept + 1; rank++) starts[rank]! += starts[rank - 1]!
  const order = new Uint32Array(n)
  for (let p = 0; p < n; p++) order[starts[ranks[p]!]!++] = p
  return order
}
