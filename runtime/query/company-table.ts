/**
 * A snapshot's companies as the server holds them: the few fields the
 * company queries filter and sort on, in arrays (strings, codes, numbers),
 * and every company's JSON text in one buffer, parsed when a response needs
 * the whole company. As parsed objects, the ~50,000 companies of a 1M-job
 * snapshot were ~1.5 million long-lived heap objects (60% of the heap once
 * loaded) that every full collection had to mark: a forced full collection
 * took 48 ms with them, 21 ms without. A buffer's bytes are not walked.
 */
import type { CompanyColumnsRow } from '../../core/company-columns.ts'
import type { IndexedCompany } from '../../core/snapshot.ts'
import { textTerms } from '../../core/search.ts'
import { runSteps, type Steps } from '../../core/steps.ts'

/** Companies indexed (or added) per step: ~3 ms at a time. */
export const COMPANIES_PER_STEP = 10_000

/** A small vocabulary (countries, schedule types, remote levels) stored as one code per company; 0 is absent. */
class Vocabulary {
  readonly values: (string | undefined)[] = [undefined]
  private readonly codes = new Map<string, number>()

  code(value: string | undefined): number {
    if (value === undefined) return 0
    let code = this.codes.get(value)
    if (code === undefined) {
      code = this.values.push(value) - 1
      if (code > 0xffff) throw new Error('more than 65,535 distinct values of one company field')
      this.codes.set(value, code)
    }
    return code
  }
}

export class CompanyTable {
  private readonly byId = new Map<string, number>()
  private readonly bySlug = new Map<string, number>()
  private nameOrder: Uint32Array | undefined
  private joinedTerms: string[] | undefined

  private readonly text: Buffer
  private readonly columns: CompanyColumns

  /** Made by a CompanyTableBuilder (or fromCompanies), which then indexes it (inSteps). */
  private constructor(text: Buffer, columns: CompanyColumns) {
    this.text = text
    this.columns = columns
  }

  /** A table of `columns` over `text`, its id and slug lookups filled a slice of companies per step. */
  static *inSteps(text: Buffer, columns: CompanyColumns): Steps<CompanyTable> {
    const table = new CompanyTable(text, columns)
    const { ids, slugs } = columns
    for (let from = 0; from < ids.length; from += COMPANIES_PER_STEP) {
      if (from > 0) yield
      for (let i = from, to = Math.min(ids.length, from + COMPANIES_PER_STEP); i < to; i++) {
        table.byId.set(ids[i]!, i)
        table.bySlug.set(slugs[i]!, i)
      }
    }
    return table
  }

  /** From parsed companies alone (an older snapshot's layout): their text is each one serialized again. */
  static fromCompanies(companies: readonly IndexedCompany[]): CompanyTable {
    const lines = companies.map((company) => Buffer.from(JSON.stringify(company)))
    const starts = new Uint32Array(lines.length)
    const ends = new Uint32Array(lines.length)
    for (let i = 0, at = 0; i < lines.length; at += lines[i]!.length, i++) {
      starts[i] = at
      ends[i] = at + lines[i]!.length
    }
    const builder = new CompanyTableBuilder(starts, ends)
    for (const company of companies) builder.add(company)
    return builder.finish(Buffer.concat(lines))
  }

  get size(): number {
    return this.columns.ids.length
  }

  indexOfId(id: string): number | undefined {
    return this.byId.get(id)
  }

  indexOfSlug(slug: string): number | undefined {
    return this.bySlug.get(slug)
  }

  /** The whole company, parsed from its text (a new object each call). */
  company(i: number): IndexedCompany {
    return JSON.parse(this.text.toString('utf8', this.columns.starts[i], this.columns.ends[i])) as IndexedCompany
  }

  companyById(id: string): IndexedCompany | undefined {
    const i = this.byId.get(id)
    return i === undefined ? undefined : this.company(i)
  }

  companyBySlug(slug: string): IndexedCompany | undefined {
    const i = this.bySlug.get(slug)
    return i === undefined ? undefined : this.company(i)
  }

  id(i: number): string {
    return this.columns.ids[i]!
  }

  slug(i: number): string {
    return this.columns.slugs[i]!
  }

  name(i: number): string {
    return this.columns.names[i]!
  }

  country(i: number): string | undefined {
    return this.columns.countries.values[this.columns.countryCodes[i]!]
  }

  scheduleType(i: number): IndexedCompany['schedule_type'] {
    return this.columns.schedules.values[this.columns.scheduleCodes[i]!] as IndexedCompany['schedule_type']
  }

  remoteLevel(i: number): IndexedCompany['remote_level'] {
    return this.columns.remoteLevels.values[this.columns.remoteCodes[i]!] as IndexedCompany['remote_level']
  }

  hiresWorldwide(i: number): boolean {
    return this.columns.worldwide[i] === 1
  }

  workLifeScore(i: number): number | undefined {
    const score = this.columns.workLifeScores[i]!
    return Number.isNaN(score) ? undefined : score
  }

  hoursFullTime(i: number): number | undefined {
    const hours = this.columns.fullTimeHours[i]!
    return Number.isNaN(hours) ? undefined : hours
  }

  /** Indexes in name order (companyNameOrder's: by name, ties by slug), sorted on first use. */
  inNameOrder(compare: (a: { name: string; slug: string }, b: { name: string; slug: string }) => number): Uint32Array {
    if (!this.nameOrder) {
      const order = Array.from({ length: this.size }, (_, i) => i)
      const at = (i: number) => ({ name: this.columns.names[i]!, slug: this.columns.slugs[i]! })
      order.sort((a, b) => compare(at(a), at(b)))
      this.nameOrder = Uint32Array.from(order)
    }
    return this.nameOrder
  }

  /**
   * The words `q` searches in a company (name, one-line description), made on first use for every company:
   * one string each, the terms between spaces and a space at either end (terms hold no spaces).
   */
  searchTerms(i: number): string {
    if (!this.joinedTerms) {
      this.joinedTerms = this.columns.names.map(
        (name, k) => ` ${[...new Set(textTerms(`${name} ${this.columns.shortDescriptions[k] ?? ''}`))].join(' ')} `,
      )
    }
    return this.joinedTerms[i]!
  }
}

/** The arrays a CompanyTable reads, one entry per company in the file's order. */
interface CompanyColumns {
  /** Where each company's JSON text lies in the table's buffer: [starts[i], ends[i]). */
  starts: Uint32Array
  ends: Uint32Array
  ids: string[]
  slugs: string[]
  names: string[]
  shortDescriptions: (string | undefined)[]
  countryCodes: Uint16Array
  countries: Vocabulary
  scheduleCodes: Uint16Array
  schedules: Vocabulary
  remoteCodes: Uint16Array
  remoteLevels: Vocabulary
  /** 1 when the company hires worldwide. */
  worldwide: Uint8Array
  /** NaN where the company has none. */
  workLifeScores: Float64Array
  fullTimeHours: Float64Array
}

export class CompanyTableBuilder {
  private count = 0
  private readonly size: number
  private readonly ids: string[] = []
  private readonly slugs: string[] = []
  private readonly names: string[] = []
  private readonly shortDescriptions: (string | undefined)[] = []
  private readonly countryCodes: Uint16Array
  private readonly countries = new Vocabulary()
  private readonly scheduleCodes: Uint16Array
  private readonly schedules = new Vocabulary()
  private readonly remoteCodes: Uint16Array
  private readonly remoteLevels = new Vocabulary()
  private readonly worldwide: Uint8Array
  private readonly workLifeScores: Float64Array
  private readonly fullTimeHours: Float64Array

  /** Where each company's JSON text lies in the buffer the table will hold: [starts[i], ends[i]). */
  constructor(
    private readonly starts: Uint32Array,
    private readonly ends: Uint32Array,
  ) {
    const size = starts.length
    this.size = size
    this.countryCodes = new Uint16Array(size)
    this.scheduleCodes = new Uint16Array(size)
    this.remoteCodes = new Uint16Array(size)
    this.worldwide = new Uint8Array(size)
    this.workLifeScores = new Float64Array(size)
    this.fullTimeHours = new Float64Array(size)
  }

  /** The next company, in the order of the texts' places. */
  add(company: CompanyColumnsRow): void {
    const i = this.count++
    if (i >= this.size) throw new Error(`more companies than the ${this.size} lines`)
    this.ids.push(company.id)
    this.slugs.push(company.slug)
    this.names.push(company.name)
    this.shortDescriptions.push(company.short_description)
    this.countryCodes[i] = this.countries.code(company.country)
    this.scheduleCodes[i] = this.schedules.code(company.schedule_type)
    this.remoteCodes[i] = this.remoteLevels.code(company.remote_level)
    this.worldwide[i] = company.hires_worldwide ? 1 : 0
    this.workLifeScores[i] = company.work_life_score ?? Number.NaN
    this.fullTimeHours[i] = company.hours_full_time ?? Number.NaN
  }

  finish(text: Buffer): CompanyTable {
    return runSteps(this.finishSteps(text))
  }

  /** finish in steps of a few milliseconds at 1M jobs' ~50,000 companies (a hot swap makes it between requests). */
  finishSteps(text: Buffer): Steps<CompanyTable> {
    if (this.count !== this.size) throw new Error(`${this.count} companies in ${this.size} lines`)
    const { starts, ends, ids, slugs, names, shortDescriptions, countryCodes, countries } = this
    const { scheduleCodes, schedules, remoteCodes, remoteLevels, worldwide, workLifeScores, fullTimeHours } = this
    return CompanyTable.inSteps(text, {
      starts,
      ends,
      ids,
      slugs,
      names,
      shortDescriptions,
      countryCodes,
      countries,
      scheduleCodes,
      schedules,
      remoteCodes,
      remoteLevels,
      worldwide,
      workLifeScores,
      fullTimeHours,
    })
  }
}
