/**
 * The per-record work of a build, batch by batch: parse, validate, transform.
 * Live jobs' outputs go to a spill file, where the build reads them back in
 * date order; the small summaries are returned. Runs on a worker thread
 * (record-worker.ts) for large datasets, on the build's own thread for small
 * ones (see RecordPool).
 */
import { writeSync } from 'node:fs'
import type { DatasetCompany, ExchangeRates } from '../core/schema/dataset.ts'
import type { DatasetIssue, RecordSource } from './issues.ts'
import { isLiveAt, jobOutputs, summarize, type RecordSummary } from './job-record.ts'
import { checkJobRecord } from './load-dataset.ts'

export interface BatchContext {
  rates: ExchangeRates | undefined
  companies: DatasetCompany[]
  nowMs: number
}

export interface RecordBatch {
  id: number
  records: { ordinal: number; source: RecordSource; text: string }[]
}

/** Where a live job's meta line, v2 body and v1 body were spilled, one after the other. */
export interface Spilled {
  offset: number
  metaLength: number
  v2Length: number
  v1Length: number
}

export interface RecordOutcome {
  ordinal: number
  /** Absent when the record did not pass its schema. */
  summary?: RecordSummary
  issues: DatasetIssue[]
  /** A live, valid job's outputs in the spill file. */
  spilled?: Spilled
}

/** Processes batches for one spill file (a descriptor the caller opened and closes). */
export class BatchProcessor {
  private readonly companyById: Map<string, DatasetCompany>
  private spillSize = 0

  constructor(
    private readonly context: BatchContext,
    private readonly spillFd: number,
  ) {
    this.companyById = new Map(context.companies.map((company) => [company.id, company]))
  }

  process(batch: RecordBatch): RecordOutcome[] {
    const chunks: Buffer[] = []
    const start = this.spillSize
    const outcomes = batch.records.map(({ ordinal, source, text }): RecordOutcome => {
      const done = this.processRecord(source, text)
      if (!('outputs' in done)) return { ordinal, ...done }
      const meta = Buffer.from(done.outputs.meta)
      const { v2, v1 } = done.outputs
      chunks.push(meta, v2, v1)
      const spilled = { offset: this.spillSize, metaLength: meta.length, v2Length: v2.length, v1Length: v1.length }
      this.spillSize += meta.length + v2.length + v1.length
      return { ordinal, summary: done.summary, issues: [], spilled }
    })
    const bytes = Buffer.concat(chunks)
    for (let written = 0; written < bytes.length; )
      written += writeSync(this.spillFd, bytes, written, bytes.length - written, start + written)
    return outcomes
  }

  private processRecord(
    source: RecordSource,
    text: string,
  ):
    | { summary?: RecordSummary; issues: DatasetIssue[] }
    | { summary: RecordSummary; outputs: { meta: string; v2: Buffer; v1: Buffer } } {
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch (error) {
      return { issues: [{ source, message: `not valid JSON: ${(error as Error).message}` }] }
    }
    const { rates, nowMs } = this.context
    const { job, issues } = checkJobRecord(value, source, { rates, companyById: this.companyById })
    if (!job) return { issues }
    const summary = summarize(job, rates)
    // Without a rate table the build fails anyway: the records are only checked.
    if (issues.length > 0 || !rates || !isLiveAt(summary, nowMs)) return { summary, issues }
    const outputs = jobOutputs(job, this.companyById.get(job.company_id)!, rates, source)
    if (Array.isArray(outputs)) return { summary, issues: outputs }
    return { summary, outputs }
  }
}
