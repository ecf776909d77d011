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
