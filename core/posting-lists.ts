/**
 * Posting lists as the runtime builds a job index from index/jobs.json (a
 * snapshot without index/jobs.bin): per facet, per value as the dataset
 * spells it, the ascending positions of the jobs that have it. The build's
 * index/jobs.bin writer (core/job-index-file.ts) collects the same lists in
 * typed arrays, so both give one index.
 */
export type PostingLists<F extends string> = Map<F, Map<string, number[]>>

/** Adds `position` (jobs come in date order, so positions ascend) to the list of `facet`'s `value`. */
export function addPosting<F extends string>(
  lists: PostingLists<F>,
  facet: F,
  value: string | undefined,
  position: number,
): void {
  if (value === undefined) return
  let byValue = lists.get(facet)
  if (!byValue) {
    byValue = new Map()
    lists.set(facet, byValue)
  }
  let list = byValue.get(value)
  if (!list) {
    list = []
    byValue.set(value, list)
  }
  if (list.length === 0 || list[list.length - 1] !== position) list.push(position)
}
