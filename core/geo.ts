/**
 * Country, continent and region facts. Countries and continents come from
 * the `countries-list` package; the only hand-made table is which countries
 * form the trading regions (EMEA, APAC, ...) that job ads use, because no
 * package publishes that.
 */
import { continents, countries, type TContinentCode, type TCountryCode } from 'countries-list'

export type CountryCode = TCountryCode
export type ContinentCode = TContinentCode

const countryByLowerName = new Map<string, CountryCode>()
for (const [code, data] of Object.entries(countries) as [CountryCode, (typeof countries)[CountryCode]][]) {
  countryByLowerName.set(data.name.toLowerCase(), code)
  countryByLowerName.set(code.toLowerCase(), code)
  // The package's own common names ("Turkey" for Türkiye, "Holland", "Czech Republic", "USA").
  for (const alias of (data as { alias?: string[] }).alias ?? []) countryByLowerName.set(alias.toLowerCase(), code)
}
// Common names that differ from the package's official ones.
const ALIASES: Record<string, CountryCode> = {
  usa: 'US',
  'united states of america': 'US',
  uk: 'GB',
  'great britain': 'GB',
  england: 'GB',
  'south korea': 'KR',
  russia: 'RU',
  czechia: 'CZ',
  'the netherlands': 'NL',
}
for (const [alias, code] of Object.entries(ALIASES)) countryByLowerName.set(alias, code)

const continentByLowerName = new Map<string, ContinentCode>()
for (const [code, name] of Object.entries(continents) as [ContinentCode, string][]) {
  continentByLowerName.set(name.toLowerCase(), code)
}

/** Resolves a country name or ISO 3166-1 alpha-2 code, case-insensitively. */
export function resolveCountry(nameOrCode: string): CountryCode | undefined {
  return countryByLowerName.get(nameOrCode.trim().toLowerCase())
}

export function countryName(code: CountryCode): string {
  return countries[code].name
}

export function countryContinent(code: CountryCode): ContinentCode {
  return countries[code].continent
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
  const continent = countryContinent(code)
  return REGION_NAMES.filter((region) => {
    const def = REGION_DEFINITIONS[region]!
    if (def.exclude?.includes(code)) return false
    return def.continents.includes(continent) || (def.include?.includes(code) ?? false)
  })
}

export function allCountryCodes(): CountryCode[] {
  return Object.keys(countries) as CountryCode[]
}

export function capitalOf(code: CountryCode): string {
  return countries[code].capital
}
