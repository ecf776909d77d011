/**
 * One job record's share of a build, done once per record (on a worker
 * thread) and remembered in the build cache: what the checks across records
 * need (its summary), and what the snapshot needs (its v2 and v1 bodies, its
 * index entry, its search terms).
 */
import { annualUsd } from '../core/salary.ts'
import { V1Job, V2Job } from '../core/schema/api.ts'
import type { DatasetCompany, DatasetJob, ExchangeRates } from '../core/schema/dataset.ts'
import { documentTerms } from '../core/search.ts'
import { contentHash } from '../core/content-hash.ts'
import { indexJob, searchDocument } from './index-jobs.ts'
import type { DatasetIssue, RecordSource } from './issues.ts'
import { toV1Job, toV2Job } from './transform.ts'

/** What the build keeps in memory per record: enough for the checks across records, the sort and the salary order. */
export interface RecordSummary {
  id: string
  slug: string
  company_id: string
  status: DatasetJob['status']
  /** Epoch milliseconds. */
  posted_at: number
  expires_at?: number
  /** Top of the annualised USD range, when the job states a salary. */
  salary_high?: number
}

export function summarize(job: DatasetJob, rates: ExchangeRates | undefined): RecordSummary {
  const summary: RecordSummary = {
    id: job.id,
    slug: job.slug,
    company_id: job.company_id,
    status: job.status,
    posted_at: Date.parse(job.posted_at),
  }
  if (job.expires_at !== undefined) summary.expires_at = Date.parse(job.expires_at)
  const salary = rates && annualUsd(job, rates)
  if (salary) summary.salary_high = salary.high
  return summary
}

/** Published in this build: live, and not past its expiry at the build's reference time. */
export function isLiveAt(summary: Pick<RecordSummary, 'status' | 'expires_at'>, nowMs: number): boolean {
  return summary.status === 'live' && (summary.expires_at === undefined || summary.expires_at > nowMs)
}

/**
 * A live job's outputs. `meta` is one line of text (no newline): the v2
 * body's hash, the index entry (JSON) and the search terms (space-separated),
 * tab-separated, kept verbatim in the build cache so that a reused record
 * writes the same bytes a fresh one does.
 */
export interface JobOutputs {
  v2: Buffer
  v1: Buffer
  meta: string
}

/** Parsed back from JobOutputs.meta. */
export interface JobMeta {
  /** The job's index entry (IndexedJob) as JSON: what index/jobs.bin is made from. */
  indexedJson: string
  /** Content hash of the v2 body: the file's ETag. */
  hash: string
  terms: string[]
}

export function parseMeta(meta: string): JobMeta {
  const first = meta.indexOf('\t')
  const second = meta.indexOf('\t', first + 1)
  const terms = meta.slice(second + 1)
  return {
    hash: meta.slice(0, first),
    indexedJson: meta.slice(first + 1, second),
    terms: terms === '' ? [] : terms.split(' '),
  }
}

/** Transforms a valid live job; a job that cannot be served exactly as v2 and v1 gives issues instead. */
export function jobOutputs(
  job: DatasetJob,
  company: DatasetCompany,
  rates: ExchangeRates,
  source: RecordSource,
): JobOutputs | DatasetIssue[] {
  const v2 = toV2Job(job, company)
  const v1 = toV1Job(job, company, v2)
  const issues: DatasetIssue[] = []
  // The output schemas are the contract: a record that cannot be served exactly is a dataset error, not a surprise for a client.
  for (const [shape, schema, value] of [
    ['v2', V2Job, v2],
    ['v1', V1Job, v1],
  ] as const) {
    const checked = schema.safeParse(value)
    if (!checked.success) {
      for (const issue of checked.error.issues) {
        issues.push({
          source,
          recordId: job.id,
          field: issue.path.join('.'),
          message: `cannot be served as ${shape}: ${issue.message}`,
        })
      }
    }
  }
  if (issues.length > 0) return issues
  const v2Body = Buffer.from(JSON.stringify(v2))
  const indexed = indexJob(job, rates, contentHash(v2Body))
  const terms = [...documentTerms(searchDocument(v2, company))]
  // Terms never hold whitespace (the tokenizer splits on it), so a space joins them.
  return {
    v2: v2Body,
    v1: Buffer.from(JSON.stringify(v1)),
    meta: `${indexed.hash}\t${JSON.stringify(indexed)}\t${terms.join(' ')}`,
  }
}
