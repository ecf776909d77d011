/**
 * Country, continent and region facts. Countries and continents come from
 * the `countries-list` package; the only hand-made table is which countries
 * form the trading regions (EMEA, APAC, ...) that job ads use, because no
 * package publishes that.
 */
import { continents, countries, type TContinentCode, type TCountryCode } from 'countries-list'
import { withoutAccents } from './fold.ts'

export type CountryCode = TCountryCode
export type ContinentCode = TContinentCode

/** A name as looked up: trimmed, lower case, accents dropped ("Côte d'Ivoire" and "cote d'ivoire" are one name). */
function nameKey(name: string): string {
  return withoutAccents(name.trim().toLowerCase())
}

const countryByLowerName = new Map<string, CountryCode>()
for (const [code, data] of Object.entries(countries) as [CountryCode, (typeof countries)[CountryCode]][]) {
  countryByLowerName.set(nameKey(data.name), code)
  countryByLowerName.set(code.toLowerCase(), code)
  // The package's own common names ("Turkey" for Türkiye, "Holland", "Czech Republic", "USA").
  for (const alias of (data as { alias?: string[] }).alias ?? []) countryByLowerName.set(nameKey(alias), code)
}
// Common names that differ from the package's official ones; the UK's nations are the UK.
const ALIASES: Record<string, CountryCode> = {
  usa: 'US',
  'united states of america': 'US',
  uk: 'GB',
  'great britain': 'GB',
  england: 'GB',
  scotland: 'GB',
  wales: 'GB',
  'northern ireland': 'GB',
  'south korea': 'KR',
  korea: 'KR',
  russia: 'RU',
  czechia: 'CZ',
  'the netherlands': 'NL',
}
for (const [alias, code] of Object.entries(ALIASES)) countryByLowerName.set(alias, code)
// Each country's own name for itself ("Deutschland", "España", "Brasil"), where no English name has it.
for (const [code, data] of Object.entries(countries) as [CountryCode, (typeof countries)[CountryCode]][]) {
  const key = nameKey(data.native)
  if (!countryByLowerName.has(key)) countryByLowerName.set(key, code)
}

const continentByLowerName = new Map<string, ContinentCode>()
for (const [code, name] of Object.entries(continents) as [ContinentCode, string][]) {
  continentByLowerName.set(name.toLowerCase(), code)
}

/** Resolves a country name (English, common or its own) or ISO 3166-1 alpha-2 code, in any case, accents or not. */
export function resolveCountry(nameOrCode: string): CountryCode | undefined {
  return countryByLowerName.get(nameKey(nameOrCode))
}

export function countryName(code: CountryCode): string {
  return countries[code].name
}

/** The country's continent (one: where an office's location says it is). */
export function countryContinent(code: CountryCode): ContinentCode {
  return countries[code].continent
}

/**
 * Every continent a country is in, for matching "remote from <continent>":
 * a country the package places in both Europe and Asia (Russia, Türkiye,
 * Kazakhstan, Georgia, Azerbaijan) is in both, the line between the two
 * being a convention across one landmass. Other second continents the
 * package lists (Denmark's Greenland, Egypt's Sinai) are left out: a job
 * open to North America is not one to take from Copenhagen.
 */
export function countryContinents(code: CountryCode): ContinentCode[] {
  const listed = (countries[code] as { continents?: ContinentCode[] }).continents ?? []
  return listed.includes('EU') && listed.includes('AS') ? ['EU', 'AS'] : [countries[code].continent]
}

export function resolveContinent(name: string): ContinentCode | undefined {
  const trimmed = name.trim()
  return (
    continentByLowerName.get(trimmed.toLowerCase()) ??
    (trimmed.toUpperCase() in continents ? (trimmed.toUpperCase() as ContinentCode) : undefined)
  )
}

export function continentName(code: ContinentCode): string {
  return continents[code]
}

const MIDDLE_EAST: CountryCode[] = [
  'AE',
  'BH',
  'IL',
  'IQ',
  'IR',
  'JO',
  'KW',
  'LB',
  'OM',
  'PS',
  'QA',
  'SA',
  'SY',
  'TR',
  'YE',
]

/** Regions used in "remote within ..." ads, as sets of continents plus extra countries. */
const REGION_DEFINITIONS: Record<
  string,
  { continents: ContinentCode[]; include?: CountryCode[]; exclude?: CountryCode[] }
> = {
  Worldwide: { continents: ['AF', 'AN', 'AS', 'EU', 'NA', 'OC', 'SA'] },
  EMEA: { continents: ['EU', 'AF'], include: MIDDLE_EAST },
  Americas: { continents: ['NA', 'SA'] },
  APAC: { continents: ['AS', 'OC'], exclude: MIDDLE_EAST },
  LATAM: { continents: ['SA'], include: ['MX', 'GT', 'HN', 'SV', 'NI', 'CR', 'PA', 'CU', 'DO'] },
}
const REGION_NAMES = Object.keys(REGION_DEFINITIONS)

export function resolveRegion(name: string): string | undefined {
  const lower = name.trim().toLowerCase()
  return REGION_NAMES.find((region) => region.toLowerCase() === lower)
}

/** The regions (by canonical name) a country belongs to, Worldwide included. */
export function regionsOfCountry(code: CountryCode): string[] {
  const inContinents = countryContinents(code)
  return REGION_NAMES.filter((region) => {
    const def = REGION_DEFINITIONS[region]!
    if (def.exclude?.includes(code)) return false
    return (
      inContinents.some((continent) => def.continents.includes(continent)) || (def.include?.includes(code) ?? false)
    )
  })
}

export function allCountryCodes(): CountryCode[] {
  return Object.keys(countries) as CountryCode[]
}

export function capitalOf(code: CountryCode): string {
  return countries[code].capital
}
