/**
 * The q-quantile (0..1) of values sorted ascending, interpolating linearly
 * between the two closest ranks (the common "R-7" definition spreadsheets
 * use), so a median of an even count is the mean of the middle two.
 */
export function quantile(sorted: ArrayLike<number>, q: number): number {
  if (sorted.length === 0) return 0
  const position = (sorted.length - 1) * q
  const lower = Math.floor(position)
  const upper = Math.ceil(position)
  return sorted[lower]! + (sorted[upper]! - sorted[lower]!) * (position - lower)
}
