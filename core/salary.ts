/**
 * Salary arithmetic shared by the build (precomputing sort keys) and the MCP
 * tools (readable amounts): smallest-unit amounts, currency exponents from
 * Intl (JPY has none, USD has two), and annualised US dollars as the
 * salary filters define them (docs/api.md).
 */
import type { ExchangeRates } from './schema/dataset.ts'
import type { SalaryPeriod } from './taxonomy.ts'

const DEFAULT_WEEKLY_HOURS = 40
const WEEKS_PER_YEAR = 52
const MONTHS_PER_YEAR = 12

const exponentCache = new Map<string, number>()

/** Digits after the decimal point for a currency (2 for USD, 0 for JPY). */
function currencyExponent(currency: string): number {
  let digits = exponentCache.get(currency)
  if (digits === undefined) {
    digits = new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2
    exponentCache.set(currency, digits)
  }
  return digits
}

/** A smallest-unit amount as whole currency units (12345 USD cents -> 123.45). */
function toMajorUnits(amountMinor: number, currency: string): number {
  return amountMinor / 10 ** currencyExponent(currency)
}

export interface SalaryFields {
  salary_min?: number
  salary_max?: number
  salary_currency?: string
  salary_period?: SalaryPeriod
  hours_per_week_min?: number
  hours_per_week_max?: number
}

export interface AnnualUsdRange {
  /** Bottom of the range, or the top when there is no bottom. */
  low: number
  /** Top of the range, or the bottom when there is no top. */
  high: number
}

/**
 * The salary range in whole US dollars per year: converted with the dataset's
 * rate table, `month` x 12, `hour` x weekly hours (40 when unknown) x 52.
 * Undefined when the job publishes no salary.
 */
export function annualUsd(job: SalaryFields, rates: ExchangeRates): AnnualUsdRange | undefined {
  const { salary_min: min, salary_max: max, salary_currency: currency, salary_period: period } = job
  if ((min === undefined && max === undefined) || !currency || !period) return undefined
  const usdPerUnit = rates.usd_per_unit[currency]
  if (usdPerUnit === undefined) return undefined
  const weeklyHours = job.hours_per_week_max ?? job.hours_per_week_min ?? DEFAULT_WEEKLY_HOURS
  const perYear = period === 'year' ? 1 : period === 'month' ? MONTHS_PER_YEAR : weeklyHours * WEEKS_PER_YEAR
  const toUsd = (amount: number) => Math.round(toMajorUnits(amount, currency) * usdPerUnit * perYear * 100) / 100
  const low = toUsd((min ?? max)!)
  const high = toUsd((max ?? min)!)
  return { low, high }
}

const formatCache = new Map<string, Intl.NumberFormat>()

/** Building an Intl.NumberFormat costs ~100 us, formatting with one ~1 us: keep one per currency and precision. */
function currencyFormat(currency: string, digits: number): Intl.NumberFormat {
  const key = `${currency}:${digits}`
  let format = formatCache.get(key)
  if (!format) {
    format = new Intl.NumberFormat('en-US', {
      style: 'currency',
      currency,
      minimumFractionDigits: digits,
      maximumFractionDigits: digits,
    })
    formatCache.set(key, format)
  }
  return format
}

/** "€60,000 - €75,000 a year" ("from €60,000 a year" with only a minimum) for people and models. */
export function formatSalary(job: SalaryFields): string | undefined {
  const { salary_min: min, salary_max: max, salary_currency: currency, salary_period: period } = job
  if ((min === undefined && max === undefined) || !currency || !period) return undefined
  const format = (amount: number) => {
    const major = toMajorUnits(amount, currency)
    // Whole amounts read better without ".00"; cents stay when they are there.
    const digits = Number.isInteger(major) ? 0 : currencyExponent(currency)
    return currencyFormat(currency, digits).format(major)
  }
  // One bound alone is a floor or a ceiling, said as one: a reader must not take it for the salary.
  const range =
    min !== undefined && max !== undefined
      ? min === max
        ? format(min)
        : `${format(min)} - ${format(max)}`
      : min !== undefined
        ? `from ${format(min)}`
        : `up to ${format(max!)}`
  const per = period === 'year' ? 'a year' : period === 'month' ? 'a month' : 'an hour'
  return `${range} ${per}`
}
