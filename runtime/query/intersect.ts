/**
 * The one intersection behind filters and `q`. Each step is a union of
 * posting lists (a filter group's values, or a query term's expansions); a
 * position matches when it is in every step. A position's level in a byte
 * mask goes up by one at each step it is in, so after the last step the
 * positions at the top level are the matches: one allocation and one walk of
 * each posting list, whatever the number of steps. Uint8 levels: at most 7
 * facet groups plus MAX_QUERY_TERMS terms, plus the two marks below.
 */
export interface MatchMask {
  /** Per position; `mask[p] === matched` for the positions in every step that `accept` took. */
  mask: Uint8Array
  matched: number
  /** How many positions are marked `matched`. */
  count: number
}

/**
 * Marks the positions in every step and accepted by `accept` (called once
 * per such position, so per-job checks cost nothing for the rest). The
 * caller reads matches in whatever order it needs by walking that order and
 * testing the mask, so no list of matches is built or sorted.
 */
export function markEveryStep(steps: readonly (readonly Uint32Array[])[], size: number, accept?: (position: number) => boolean): MatchMask {
  if (steps.length === 0) throw new Error('markEveryStep: no steps (nothing restricts; the caller decides what that means)')
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
  // In the last step a position is seen at most once (a later list of the same union finds it
  // past `last`): refused ones stay at last + 1, accepted ones go to last + 2.
  const refused = last + 1
  const matched = last + 2
  let count = 0
  for (const list of steps[last]!) {
    for (let k = 0; k < list.length; k++) {
      const p = list[k]!
      if (mask[p] !== last) continue
      if (accept === undefined || accept(p)) {
        mask[p] = matched
        count++
      } else mask[p] = refused
    }
  }
  return { mask, matched, count }
}
