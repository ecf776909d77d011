/**
 * The filter vocabularies of one snapshot with their live job counts: what a
 * client or an agent can ask GET /api/v2/jobs for before it asks. Each count
 * is the `total` the list returns for that one value (the same query engine
 * runs it), so the two cannot disagree.
 */
import { countryName, resolveCountry, resolveRegion } from '../../core/geo.ts'
import { NO_FILTER, type V2ListQuery } from '../../core/query.ts'
import type { V2FiltersResponse } from '../../core/schema/api.ts'
import {
  categoryLabel,
  levelLabel,
  SCHEDULE_TYPE_VALUES,
  SCHEDULE_TYPES,
  WORK_ARRANGEMENTS,
} from '../../core/taxonomy.ts'
import type { Facet } from './job-index.ts'
import { type QueryContext, runV2Query } from './run-query.ts'

type Counted = { value: string; jobs: number }

const mostFirst = <T extends Counted>(values: T[]) =>
  values.filter((v) => v.jobs > 0).sort((a, b) => b.jobs - a.jobs || a.value.localeCompare(b.value))

export function filterVocabulary(context: QueryContext, snapshotId: string): V2FiltersResponse {
  const count = (query: Partial<V2ListQuery>, extra: [Facet, string[]][] = []) =>
    runV2Query(context, { ...NO_FILTER, ...query }, extra).total
  const { index } = context
  const places = index.valuesOf('place')
  const countries = index.countriesNamed()
  const offices = places.flatMap((key) => {
    const code = key.startsWith('o:') ? resolveCountry(key.slice(2)) : undefined
    return code ? [code] : []
  })
  const regions = places.flatMap((key) => {
    const name = key.startsWith('r:') ? resolveRegion(key.slice(2)) : undefined
    return name ? [{ name, key }] : []
  })
  return {
    snapshot_id: snapshotId,
    schedule: SCHEDULE_TYPE_VALUES.map((type) => {
      const s = SCHEDULE_TYPES[type]
      return {
        value: type,
        label: s.label,
        definition: s.definition,
        reduces_hours: s.reducesHours,
        full_pay: s.fullPay,
        jobs: count({ schedule: [type] }),
      }
    }),
    category: mostFirst(
      index
        .valuesOf('category')
        .map((value) => ({ value, label: categoryLabel(value), jobs: count({ category: [value] }) })),
    ),
    level: mostFirst(
      index.valuesOf('level').map((value) => ({ value, label: levelLabel(value), jobs: count({ level: [value] }) })),
    ),
    work_arrangement: WORK_ARRANGEMENTS.map((value) => ({ value, jobs: count({ work_arrangement: [value] }) })),
    skills: mostFirst(index.valuesOf('tag').map((value) => ({ value, jobs: count({ skills: [value] }) }))),
    country: mostFirst(
      countries.map((code) => ({ value: code, label: countryName(code), jobs: count({ country: [code] }) })),
    ),
    office_country: mostFirst(
      offices.map((code) => ({ value: code, label: countryName(code), jobs: count({ office_country: [code] }) })),
    ),
    region: mostFirst(regions.map(({ name, key }) => ({ value: name, jobs: count({}, [['place', [key]]]) }))),
  }
}
