/**
 * The snapshot's bulk exports (core/exports.ts), written during the build's
 * write pass as each live job goes by in date order: its v2 body becomes a
 * line of jobs.ndjson.gz (unchanged runs copied from the previous snapshot's
 * file) and a row of jobs.parquet, both on a thread of their own
 * (exports-thread.ts); the companies follow at the end.
 */
import { linkSync, mkdirSync, rmSync } from 'node:fs'
import path from 'node:path'
import { toV2CompanyProfile, companyNameOrder } from '../core/company.ts'
import { contentHash } from '../core/content-hash.ts'
import { EXPORT_FILES, type ExportFileRecord, type ExportName, exportPath } from '../core/exports.ts'
import type { IndexedCompany } from '../core/snapshot.ts'
import { NdjsonExportWriter, PreviousMembers } from './export-ndjson.ts'
import { ExportsThread } from './exports-thread.ts'
import type { PreviousSnapshot, SnapshotFileWriter } from './file-writer.ts'

/** Private files: each gzip export's member table, for the next build to copy unchanged runs from. */
const membersTable = (name: string) => `index/${name}.members`
/** Private too: jobs.parquet's column chunk table, for the next build to copy unchanged chunks from. */
const chunksTable = (name: string) => `index/${name}.chunks`

const contentTypeOf = (name: ExportName) => EXPORT_FILES.find((file) => file.name === name)!.content_type

export interface ExportsStats {
  /** Gzip members of jobs.ndjson.gz copied from the previous snapshot's file, of all. */
  membersReused: number
  members: number
  /** Column chunks of jobs.parquet copied from the previous snapshot's, of all. */
  parquetChunksReused: number
  parquetChunks: number
  /**
   * Time the build's own thread spent on the exports, waits for the worker threads included:
   * what they add to the build's wall time (their workers' CPU runs beside it, on other cores).
   */
  busyMs: number
}

export class ExportsWriter {
  private readonly thread: ExportsThread
  readonly stats: ExportsStats = {
    membersReused: 0,
    members: 0,
    parquetChunksReused: 0,
    parquetChunks: 0,
    busyMs: 0,
  }

  constructor(
    private readonly root: string,
    private readonly files: SnapshotFileWriter,
    private readonly previous: PreviousSnapshot | undefined,
    parquetRowGroupRows?: number,
  ) {
    mkdirSync(path.join(root, 'exports'), { recursive: true })
    mkdirSync(path.join(root, 'index'), { recursive: true })
    const file = (dir: string, name: ExportName, table: string) => ({
      file: path.join(dir, exportPath(name)),
      table: path.join(dir, table),
    })
    const previousFile = (name: ExportName, table: string) => previous && file(previous.dir, name, table)
    const previousBodies = previous?.dir
    this.thread = new ExportsThread(
      {
        ...(previousBodies ? { previousBodies } : {}),
        ndjson: {
          ...file(root, 'jobs.ndjson.gz', membersTable('jobs.ndjson.gz')),
          previous: previousFile('jobs.ndjson.gz', membersTable('jobs.ndjson.gz')),
        },
        parquet: {
          ...file(root, 'jobs.parquet', chunksTable('jobs.parquet')),
          previous: previous && {
            ...file(previous.dir, 'jobs.parquet', chunksTable('jobs.parquet')),
            bodies: previousBodies,
          },
        },
      },
      parquetRowGroupRows,
    )
  }

  /**
   * One live job, in date order: its v2 body (lent: copied) and that body's content hash.
   * A promise only when the exports' thread is behind and the build must wait for it.
   */
  addJob(body: Uint8Array, hash: string): Promise<void> | undefined {
    const started = performance.now()
    const waiting = this.thread.add(body, hash)
    if (waiting === undefined) {
      this.stats.busyMs += performance.now() - started
      return undefined
    }
    return waiting.then(() => {
      this.stats.busyMs += performance.now() - started
    })
  }

  /**
   * One live job republished unchanged, in date order: its place in the previous snapshot's packed
   * v2 bodies (the exports' thread reads the body there) and its content hash. A promise as for addJob.
   */
  addPrevious(position: number, hash: string): Promise<void> | undefined {
    const started = performance.now()
    const waiting = this.thread.addPrevious(position, hash)
    if (waiting === undefined) {
      this.stats.busyMs += performance.now() - started
      return undefined
    }
    return waiting.then(() => {
      this.stats.busyMs += performance.now() - started
    })
  }

  /**
   * Finishes the files, given every company with its live job count; returns
   * what the manifest records of each, and adds each to the file map (so a
   * changed export is listed among the changed paths).
   */
  async finish(companies: { company: IndexedCompany; liveJobs: number }[]): Promise<ExportFileRecord[]> {
    const started = performance.now()
    try {
      return await this.finishFiles(companies)
    } finally {
      this.stats.busyMs += performance.now() - started
    }
  }

  private async finishFiles(companies: { company: IndexedCompany; liveJobs: number }[]): Promise<ExportFileRecord[]> {
    const { jobs, parquet } = await this.thread.finish()
    this.stats.members = jobs.members
    this.stats.membersReused = jobs.membersReused
    this.stats.parquetChunks = parquet.chunks
    this.stats.parquetChunksReused = parquet.chunksReused
    const previousCompanies = this.previousMembers('companies.ndjson.gz')
    const companiesFile = this.ndjson('companies.ndjson.gz', previousCompanies)
    let companiesResult: Awaited<ReturnType<NdjsonExportWriter['finish']>>
    try {
      const listed = companies
        .filter(({ liveJobs }) => liveJobs > 0)
        .sort((a, b) => companyNameOrder(a.company, b.company))
      for (const { company, liveJobs } of listed) {
        // The server builds /api/v2/companies/{slug} from the company index as it reads it back: so is this line.
        const asServed = JSON.parse(JSON.stringify(company)) as IndexedCompany
        const body = Buffer.from(JSON.stringify(toV2CompanyProfile(asServed, liveJobs)))
        await companiesFile.add(body, contentHash(body))
      }
      companiesResult = await companiesFile.finish()
    } finally {
      companiesFile.close()
      previousCompanies?.close()
    }
    const records: ExportFileRecord[] = [
      { name: 'jobs.ndjson.gz', bytes: jobs.bytes, rows: jobs.rows, sha256: jobs.sha256, content_type: '' },
      {
        name: 'companies.ndjson.gz',
        bytes: companiesResult.bytes,
        rows: companiesResult.rows,
        sha256: companiesResult.sha256,
        content_type: '',
      },
      { name: 'jobs.parquet', bytes: parquet.bytes, rows: parquet.rows, sha256: parquet.sha256, content_type: '' },
    ]
    for (const record of records) {
      record.content_type = contentTypeOf(record.name)
      const file = exportPath(record.name)
      // The file map holds content hashes in one form: the SHA-256, base64url, cut as contentHash cuts it.
      const hash = Buffer.from(record.sha256, 'hex').toString('base64url').slice(0, 22)
      this.files.hashes.set(file, hash)
      if (this.linkedFromPrevious(file, hash)) this.files.reused++
      else this.files.rewritten++
    }
    return records
  }

  /** Releases threads and files (after a failure too). */
  async close(): Promise<void> {
    await this.thread.close()
  }

  private ndjson(name: ExportName, previous: PreviousMembers | undefined): NdjsonExportWriter {
    return new NdjsonExportWriter(
      path.join(this.root, exportPath(name)),
      path.join(this.root, membersTable(name)),
      (bytes, ends, level) => this.files.gzipMembers(bytes, ends, level),
      previous,
    )
  }

  private previousMembers(name: ExportName): PreviousMembers | undefined {
    if (!this.previous) return undefined
    const { dir } = this.previous
    return PreviousMembers.open(path.join(dir, exportPath(name)), path.join(dir, membersTable(name)))
  }

  /**
   * An export identical to the previous snapshot's (the companies after a job edit, all of them
   * when nothing changed) becomes a hard link to it, as every unchanged public file does: kept
   * snapshots then share its disk space. False when it differs or the link cannot be made.
   */
  private linkedFromPrevious(file: string, hash: string): boolean {
    if (!this.previous || this.previous.hashes.get(file) !== hash) return false
    const target = path.join(this.root, file)
    const written = `${target}.written`
    linkSync(target, written)
    rmSync(target)
    try {
      linkSync(path.join(this.previous.dir, file), target)
      rmSync(written)
      return true
    } catch {
      // The previous copy is gone: the file written here stays.
      linkSync(written, target)
      rmSync(written)
      return false
    }
  }
}
