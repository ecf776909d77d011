/**
 * "Did you mean": the known values nearest an unknown one, so an agent that
 * misspells a skill or a country gets something to retry with instead of an
 * empty result it cannot tell from "no such jobs".
 */
import { distance } from 'fastest-levenshtein'
import {
  allCountryCodes,
  continentName,
  countryContinents,
  countryName,
  regionsOfCountry,
  resolveContinent,
  resolveCountry,
  resolveRegion,
  type CountryCode,
} from '../../core/geo.ts'
import { placeKey } from '../../core/snapshot.ts'
import { CATEGORY_LABELS } from '../../core/taxonomy.ts'
import type { LoadedSnapshot } from '../snapshot/load.ts'
import { ToolError } from './errors.ts'

/** Up to `count` entries of `vocabulary` nearest `value` (edit distance, case-insensitive; ties alphabetical). */
function closestValues(value: string, vocabulary: Iterable<string>, count = 3): string[] {
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

/** The tool error for a value of an open vocabulary that this snapshot does not know. */
function unknownValue(argument: string, value: string, vocabulary: Iterable<string>): ToolError {
  const closest = closestValues(value, vocabulary)
  return new ToolError(
    `${argument}: "${value.slice(0, 100)}" is not a value any live job has. Closest known values: ${closest.map((v) => `"${v}"`).join(', ')}. Retry with one of them, or without ${argument}.`,
  )
}

/** A skill slug some live job lists, or a tool error naming the nearest ones. */
export function checkSkill(snapshot: LoadedSnapshot, skill: string, now: number): void {
  if (!snapshot.jobs.hasLiveJob('tag', skill, now)) throw unknownValue('skills', skill, snapshot.jobs.valuesOf('tag'))
}

/**
 * A category some job has, or a tool error naming the nearest ones. A
 * category of the taxonomy that no job has ("legal" in a snapshot without
 * legal jobs) is refused too: an empty result would not tell the agent that
 * the value, not the other filters, is why.
 */
export function checkCategory(snapshot: LoadedSnapshot, category: string, now: number): void {
  if (!snapshot.jobs.hasLiveJob('category', category.toLowerCase(), now))
    throw unknownValue('category', category, liveCategories(snapshot, now))
}

/** The taxonomy's categories that some live job has, in the taxonomy's order. */
export function liveCategories(snapshot: LoadedSnapshot, now: number): string[] {
  return Object.keys(CATEGORY_LABELS).filter((category) => snapshot.jobs.hasLiveJob('category', category, now))
}

/**
 * A country name or ISO code, or a tool error. A continent or region
 * ("Europe", "EMEA") is no country however near its spelling is to one
 * ("Egypt"): the error says so and names its countries with the most live
 * jobs; anything else gets the nearest country names.
 */
export function checkCountry(snapshot: LoadedSnapshot, country: string, argument = 'country'): void {
  if (resolveCountry(country)) return
  const continent = resolveContinent(country)
  const region = continent ? undefined : resolveRegion(country)
  // Suggestions come from the countries jobs name (offices, remote from), else from every country.
  const named = snapshot.jobs.countriesNamed()
  if (!continent && !region)
    throw unknownValue(argument, country, (named.length ? named : allCountryCodes()).map(countryName))
  const jobsIn = (code: CountryCode) => snapshot.jobs.postingsFor('place', placeKey.country(code))?.length ?? 0
  const busiest = named
    .filter((code) =>
      continent ? countryContinents(code).includes(continent) : regionsOfCountry(code).includes(region!),
    )
    .map((code) => [jobsIn(code), countryName(code)] as const)
    .sort((a, b) => b[0] - a[0] || a[1].localeCompare(b[1]))
    .slice(0, 5)
    .map(([, name]) => `"${name}"`)
  const area = `"${country.trim().slice(0, 100)}" is a ${continent ? 'continent' : 'region'} (${continent ? continentName(continent) : region}), not a country; ${argument} takes countries, by name or ISO code.`
  throw new ToolError(
    busiest.length
      ? `${argument}: ${area} Its countries with the most live jobs: ${busiest.join(', ')}. Retry with one of them, or without ${argument}.`
      : `${argument}: ${area} No live job names a country in it; retry without ${argument}.`,
  )
}

/**
 * For office_country: a country (checkCountry) some live job has an office
 * in, or a tool error naming the nearest countries that have one. A real
 * country without an office would read as "no such jobs" when no job could
 * have matched; `country` (remote from there too) may still find some.
 */
export function checkOfficeCountry(snapshot: LoadedSnapshot, country: string, now: number): void {
  checkCountry(snapshot, country, 'office_country')
  const code = resolveCountry(country)!
  if (snapshot.jobs.hasLiveJob('place', placeKey.office(code), now)) return
  const offices = snapshot.jobs.valuesOf('place').flatMap((key) => {
    const office = key.startsWith('o:') ? resolveCountry(key.slice(2)) : undefined
    return office && snapshot.jobs.hasLiveJob('place', key, now) ? [countryName(office)] : []
  })
  if (offices.length === 0)
    throw new ToolError('office_country: no live job has an office on record; retry without office_country.')
  const closest = closestValues(country, offices)
  throw new ToolError(
    `office_country: no live job has an office in ${countryName(code)}. Closest countries with offices: ${closest.map((v) => `"${v}"`).join(', ')}. Retry with one of them, or with country (which also finds jobs remote from there).`,
  )
}

/**
 * For search_companies: a country (checkCountry) that is the headquarters of
 * some employer with a live job, or a tool error naming the nearest such
 * countries. "Uganda" is a country, but if no listed employer is based there
 * an empty list would read as "no such employers" when no employer's country
 * could have matched.
 */
export function checkHeadquartersCountry(
  snapshot: LoadedSnapshot,
  country: string,
  liveJobs: ReadonlyMap<string, number>,
): void {
  checkCountry(snapshot, country)
  const wanted = resolveCountry(country)
  const headquarters = new Set<CountryCode>()
  const companies = snapshot.companies
  for (let i = 0; i < companies.size; i++) {
    const country = companies.country(i)
    const code = country && liveJobs.get(companies.id(i)) ? resolveCountry(country) : undefined
    if (code) headquarters.add(code)
  }
  if (wanted && headquarters.has(wanted)) return
  if (headquarters.size === 0)
    throw new ToolError(
      'country: no employer with a live job has a headquarters country on record; retry without country.',
    )
  const closest = closestValues(country, [...headquarters].map(countryName))
  throw new ToolError(
    `country: no employer with a live job has its headquarters in "${country.trim().slice(0, 100)}". Closest headquarters countries: ${closest.map((v) => `"${v}"`).join(', ')}. Retry with one of them, or without country.`,
  )
}
