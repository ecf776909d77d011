/**
 * The one intersection behind filters and `q`. Each step is a union of
 * posting lists (a filter group's values, or a query term's expansions); a
 * position matches when it is in every step. A position's level in a byte
 * mask goes up by one at each step it is in, so after the last step the
 * positions at the top level are the matches, collected as they arrive: one
 * allocation and one walk of each posting list, whatever the number of
 * steps. Uint8 levels: at most 7 facet groups plus MAX_QUERY_TERMS terms.
 */
export function positionsInEveryStep(steps: readonly (readonly Uint32Array[])[], size: number): Uint32Array {
  if (steps.length === 0) throw new Error('positionsInEveryStep: no steps (nothing restricts; the caller decides what that means)')
  const mask = new Uint8Array(size)
  const last = steps.length - 1
  for (let level = 0; level < last; level++) {
    for (const list of steps[level]!) {
      for (let k = 0; k < list.length; k++) {
        const p = list[k]!
        if (mask[p] === level) mask[p] = level + 1
      }
    }
  }
  const matches: number[] = []
  for (const list of steps[last]!) {
    for (let k = 0; k < list.length; k++) {
      const p = list[k]!
      if (mask[p] === last) {
        mask[p] = last + 1
        matches.push(p)
      }
    }
  }
  return Uint32Array.from(matches)
}
