/**
 * list_filters: the values search_jobs' filters take, each with its live job
 * count, so an agent picks a value that exists instead of guessing one. The
 * same document as GET /api/v2/filters (one query engine counts both), keyed
 * by search_jobs' argument names and without what no argument takes.
 */
import { z } from 'zod'
import { filterVocabulary } from '../query/filters.ts'
import { queryContext, type LoadedSnapshot } from '../snapshot/load.ts'
import { memoizeUntilExpiry } from '../query/live-jobs.ts'
import { closedEnum } from './closed-enum.ts'

const FILTERS = ['schedule', 'category', 'level', 'work_arrangement', 'skills', 'country', 'office_country'] as const

export const ListFiltersInput = z.strictObject({
  filter: closedEnum(FILTERS).optional(),
})

const Value = z.object({ value: z.string(), label: z.string().optional(), jobs: z.int() })
export const ListFiltersOutput = z.object({
  as_of: z.string(),
  filters: z.record(z.string(), z.array(Value)),
})
type ListFiltersResult = z.infer<typeof ListFiltersOutput>

const everyFilter = memoizeUntilExpiry((snapshot, _live, now): ListFiltersResult['filters'] => {
  const vocabulary = filterVocabulary(queryContext(snapshot, now), snapshot.id)
  const compact = (values: { value: string; label?: string; jobs: number }[]) =>
    values.map(({ value, label, jobs }) => (label === undefined ? { value, jobs } : { value, label, jobs }))
  return Object.fromEntries(FILTERS.map((name) => [name, compact(vocabulary[name])]))
})

export function listFilters(
  snapshot: LoadedSnapshot,
  args: z.infer<typeof ListFiltersInput>,
  now: number,
): ListFiltersResult {
  const filters = everyFilter(snapshot, now)
  return {
    as_of: snapshot.manifest.built_at,
    filters: args.filter ? { [args.filter]: filters[args.filter]! } : filters,
  }
}
