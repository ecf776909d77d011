/**
 * The readable salaries the docs show (docs/agents.md, MCP get_job's
 * `salary`; the feeds write the same) are what the API writes: each example,
 * with its own amounts, formatted by formatSalary, reads exactly as shown.
 */
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { formatSalary } from '../../core/index.ts'
import { REPO_ROOT } from '../../support/processes.ts'

const SYMBOLS: Record<string, string> = { '€': 'EUR', '£': 'GBP', $: 'USD' }
const PERIODS: Record<string, 'year' | 'month' | 'hour'> = { 'a year': 'year', 'a month': 'month', 'an hour': 'hour' }
/** A code span that reads like a salary: an amount (or two), then a period. */
const SALARY = /`((?:from |up to )?(?:[A-Z]{3} )?[^`\s]*\d[\d,.]*(?: - [^`\s]*\d[\d,.]*)? (?:a year|a month|an hour))`/g

describe('salary examples in the docs', () => {
  it('are written as formatSalary writes them', async () => {
    const pages = await Promise.all(
      ['README.md', 'docs/agents.md'].map((page) => readFile(path.join(REPO_ROOT, page), 'utf8')),
    )
    const examples = pages.flatMap((page) => [...page.matchAll(SALARY)]).map((m) => m[1]!)
    for (const example of examples) {
      const parts = /^(from |up to )?([€£$][\d,.]+)(?: - ([€£$][\d,.]+))? (a year|a month|an hour)$/.exec(example)
      expect(parts, `${example}: a currency symbol before each amount, as jobsnap writes`).not.toBeNull()
      const [, bound, low, high, period] = parts!
      const currency = SYMBOLS[low![0]!]
      const cents = (amount: string) => Math.round(Number(amount.replace(/[^\d.]/g, '')) * 100)
      const job = {
        salary_currency: currency,
        salary_period: PERIODS[period!],
        ...(bound === 'up to ' ? { salary_max: cents(low!) } : { salary_min: cents(low!) }),
        ...(high === undefined ? {} : { salary_max: cents(high) }),
      }
      expect(formatSalary(job as Parameters<typeof formatSalary>[0]), example).toBe(example)
    }
    // A range, a floor and a ceiling: the regular expression really found them.
    expect(examples.length).toBeGreaterThanOrEqual(3)
  })
})
