/**
 * Reads and validates a whole dataset: each record against its zod schema,
 * then the rules that span records (unique ids and slugs, known companies,
 * known currencies). Every problem is collected; the dataset is returned only
 * when there are none.
 */
import type { z } from 'zod'
import { wordedIssues } from '../core/issue-wording.ts'
import { DatasetCompany, DatasetJob, ExchangeRates } from '../core/schema/dataset.ts'
import { DatasetInvalidError, type DatasetIssue, type RecordSource } from './issues.ts'
import { findDatasetFiles, readRecords, type RecordKind } from './read-dataset.ts'

export interface Dataset {
  rates: ExchangeRates
  companies: DatasetCompany[]
  jobs: DatasetJob[]
}

export interface LoadOptions {
  /** Called every few thousand records with the running count. */
  onProgress?: (kind: RecordKind, count: number) => void
}

function recordIdOf(value: unknown): string | undefined {
  if (value && typeof value === 'object' && 'id' in value && typeof value.id === 'string') return value.id
  return undefined
}

/** A record's schema problems, one per field, in plain words ("required (a string)", not zod's wording). */
function zodIssues(error: z.ZodError, source: RecordSource, recordId: string | undefined): DatasetIssue[] {
  return wordedIssues(error.issues).map(({ path, words }) => ({
    source,
    recordId,
    field: path || undefined,
    message: words,
  }))
}

/** Tracks a unique key (id, slug) across records and reports the second sighting. */
export class UniqueKeys {
  private readonly seen = new Map<string, RecordSource>()
  constructor(private readonly what: string) {}
  check(key: string, source: RecordSource, recordId: string | undefined, field: string, issues: DatasetIssue[]): void {
    const first = this.seen.get(key)
    if (first) {
      const where =
        first.line !== undefined
          ? `${first.file}:${first.line}`
          : first.index !== undefined
            ? `${first.file}[${first.index}]`
            : first.file
      issues.push({
        source,
        recordId,
        field,
        message: `duplicate ${this.what} ${JSON.stringify(key)} (first seen at ${where})`,
      })
    } else {
      this.seen.set(key, source)
    }
  }
}

async function loadKind<T>(
  dataDir: string,
  kind: RecordKind,
  schema: z.ZodType<T>,
  issues: DatasetIssue[],
  options: LoadOptions,
  accept: (record: T, source: RecordSource) => void,
): Promise<{ files: string[]; records: number }> {
  const files = await findDatasetFiles(dataDir, kind)
  let count = 0
  for (const file of files) {
    for await (const raw of readRecords(dataDir, file, issues)) {
      count++
      if (count % 5000 === 0) options.onProgress?.(kind, count)
      const parsed = schema.safeParse(raw.value, { reportInput: true })
      if (parsed.success) accept(parsed.data, raw.source)
      else issues.push(...zodIssues(parsed.error, raw.source, recordIdOf(raw.value)))
    }
  }
  options.onProgress?.(kind, count)
  return { files, records: count }
}

/**
 * The problem with a dataset that has no file of a kind, or no record in
 * them: a misspelt file name or an empty export would otherwise publish a
 * snapshot without any job (or employer), and the API would lose them all.
 */
export function missingRecordsIssue(
  kind: 'jobs' | 'companies',
  files: string[],
  records: number,
  issues: readonly DatasetIssue[],
): DatasetIssue[] {
  const expected = `${kind}*.ndjson or ${kind}*.json`
  if (files.length === 0)
    return [
      {
        source: { file: `${kind}*` },
        message: `no ${kind} file found (expected ${expected}; other file names are not read)`,
      },
    ]
  // Files that could not be read or parsed have said so already.
  if (records === 0 && !issues.some((issue) => files.includes(issue.source.file)))
    return [
      {
        source: { file: files.join(', ') },
        message: `no ${kind === 'jobs' ? 'job' : 'company'} records: refusing to publish a snapshot without any`,
      },
    ]
  return []
}

/** The records every job depends on: the rate table and the companies, validated, with every problem collected. */
interface DatasetContext {
  rates: ExchangeRates | undefined
  companies: DatasetCompany[]
}

/** Loads the rate table and the companies (small: held in memory by the build and each of its workers). */
async function loadDatasetContext(
  dataDir: string,
  issues: DatasetIssue[],
  options: LoadOptions = {},
): Promise<DatasetContext> {
  const rates = await loadRates(dataDir, issues, options)
  return { rates, companies: await loadCompanies(dataDir, issues, options) }
}

/** The rate table, first of the context: the build starts reading the job files as soon as it has it. */
export async function loadRates(
  dataDir: string,
  issues: DatasetIssue[],
  options: LoadOptions = {},
): Promise<ExchangeRates | undefined> {
  const rates: ExchangeRates[] = []
  const rateFiles = await loadKind(dataDir, 'rates', ExchangeRates, issues, options, (record) => rates.push(record))
  if (rateFiles.files.length === 0)
    issues.push({
      source: { file: 'rates.json' },
      message: 'no exchange-rate table found (expected a rates*.json file)',
    })
  else if (rates.length > 1)
    issues.push({
      source: { file: rateFiles.files.join(', ') },
      message: `expected one exchange-rate table, found ${rates.length}`,
    })
  return rates[0]
}

/** The companies, validated, with the problems of their ids and slugs. */
export async function loadCompanies(
  dataDir: string,
  issues: DatasetIssue[],
  options: LoadOptions = {},
): Promise<DatasetCompany[]> {
  const companies: DatasetCompany[] = []
  const companyIds = new UniqueKeys('company id')
  const companySlugs = new UniqueKeys('company slug')
  const companyRecords = await loadKind(dataDir, 'companies', DatasetCompany, issues, options, (company, source) => {
    companyIds.check(company.id, source, company.id, 'id', issues)
    companySlugs.check(company.slug, source, company.id, 'slug', issues)
    companies.push(company)
  })
  issues.push(...missingRecordsIssue('companies', companyRecords.files, companyRecords.records, issues))
  return companies
}

/**
 * The checks one job record gets on its own: its schema, then the rules that
 * need only the context (its company exists, its currency has a rate). A job
 * that passes its schema comes back (for the checks across records) even when
 * the context rules fail; when all pass, its schedule is filled in from its
 * employer when it has none, as v2, the filters and the search see it.
 */
export function checkJobRecord(
  value: unknown,
  source: RecordSource,
  context: { rates: ExchangeRates | undefined; companyById: ReadonlyMap<string, DatasetCompany> },
): { job: DatasetJob | undefined; issues: DatasetIssue[] } {
  const parsed = DatasetJob.safeParse(value, { reportInput: true })
  if (!parsed.success) return { job: undefined, issues: zodIssues(parsed.error, source, recordIdOf(value)) }
  const job = parsed.data
  const issues: DatasetIssue[] = []
  const company = context.companyById.get(job.company_id)
  if (!company)
    issues.push({ source, recordId: job.id, field: 'company_id', message: `no company has id ${job.company_id}` })
  const { rates } = context
  if (job.salary_currency && rates && rates.usd_per_unit[job.salary_currency] === undefined) {
    issues.push({
      source,
      recordId: job.id,
      field: 'salary_currency',
      message: `unknown currency ${job.salary_currency}: the exchange-rate table has ${Object.keys(rates.usd_per_unit).sort().join(', ')}`,
    })
  }
  if (company) job.schedule_type ??= company.schedule_type
  return { job, issues }
}

/** Loads `dataDir` whole, in memory (tests, tools); throws DatasetInvalidError listing every problem found. */
export async function loadDataset(dataDir: string, options: LoadOptions = {}): Promise<Dataset> {
  const issues: DatasetIssue[] = []
  const { rates, companies } = await loadDatasetContext(dataDir, issues, options)
  const companyById = new Map(companies.map((company) => [company.id, company]))

  const jobs: DatasetJob[] = []
  const jobIds = new UniqueKeys('job id')
  const jobSlugs = new UniqueKeys('job slug')
  const files = await findDatasetFiles(dataDir, 'jobs')
  let count = 0
  for (const file of files) {
    for await (const raw of readRecords(dataDir, file, issues)) {
      if (++count % 5000 === 0) options.onProgress?.('jobs', count)
      const { job, issues: found } = checkJobRecord(raw.value, raw.source, { rates, companyById })
      if (job) {
        jobIds.check(job.id, raw.source, job.id, 'id', issues)
        jobSlugs.check(job.slug, raw.source, job.id, 'slug', issues)
        jobs.push(job)
      }
      issues.push(...found)
    }
  }
  options.onProgress?.('jobs', count)
  issues.push(...missingRecordsIssue('jobs', files, count, issues))
  if (issues.length > 0 || !rates) throw new DatasetInvalidError(issues)
  return { rates, companies, jobs }
}
