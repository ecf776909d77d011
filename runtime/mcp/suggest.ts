/**
 * "Did you mean": the known values nearest an unknown one, so an agent that
 * misspells a skill or a country gets something to retry with instead of an
 * empty result it cannot tell from "no such jobs".
 */
import { distance } from 'fastest-levenshtein'

/** Up to `count` entries of `vocabulary` nearest `value` (edit distance, case-insensitive; ties alphabetical). */
export function closestValues(value: string, vocabulary: Iterable<string>, count = 3): string[] {
  const wanted = value.trim().toLowerCase()
  const scored: [number, string][] = []
  for (const known of vocabulary) {
    const candidate = known.toLowerCase()
    // A value that starts the same way is nearer than its raw distance says ("java" -> "javascript").
    const score = candidate.startsWith(wanted) || wanted.startsWith(candidate) ? 0.5 : distance(wanted, candidate)
    scored.push([score, known])
  }
  scored.sort((a, b) => a[0] - b[0] || a[1].localeCompare(b[1]))
  return scored.slice(0, count).map(([, known]) => known)
}
