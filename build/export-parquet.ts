/**
 * jobs.parquet: one row per live job, in the v2 list's default order (newest
 * first), written with hyparquet-writer a row group at a time, so the file
 * is never whole in memory. Rows come as v2 bodies and are flattened here;
 * the columns are documented in PARQUET_COLUMNS (and docs/api.md's table).
 *
 * The order makes each row group a narrow band of `posted_at`, and every
 * column chunk carries min/max statistics (posted_at also a page index), so
 * a reader filtering on dates skips the row groups outside its range, and a
 * reader wanting two columns reads only those columns' chunks.
 */
import { createHash, type Hash } from 'node:crypto'
import { closeSync, openSync, writeSync } from 'node:fs'
import { ByteWriter, ParquetWriter } from 'hyparquet-writer'
import type { V2Job } from '../core/schema/api.ts'

type Kind = 'string' | 'int32' | 'int64' | 'timestamp' | 'boolean' | 'strings'

interface Column {
  name: string
  kind: Kind
  required?: boolean
  /** Min/max statistics are written for every column but the free texts and unique keys, which no range filter uses. */
  noStatistics?: boolean
  /**
   * Values nearly all distinct (keys, texts, times): PLAIN encoding. The default tries a dictionary
   * first, which for these costs several times the encoding and saves nothing.
   */
  plain?: boolean
  description: string
  value(job: V2Job): unknown
}

const tagSlugs = (tags: { slug: string }[] | undefined) => tags?.map((tag) => tag.slug)
const placeNames = (places: V2Job['office_locations']) =>
  places?.map((place) => place.city ?? place.country ?? place.continent ?? place.region ?? '')
const millis = (time: string | undefined) => (time === undefined ? undefined : BigInt(Date.parse(time)))

/** The columns, in file order. Money stays in the smallest currency unit, as in v2; times are UTC milliseconds. */
const PARQUET_COLUMNS: Column[] = [
  {
    name: 'id',
    kind: 'string',
    noStatistics: true,
    plain: true,
    required: true,
    description: 'Job id (UUID).',
    value: (j) => j.id,
  },
  {
    name: 'slug',
    kind: 'string',
    plain: true,
    noStatistics: true,
    required: true,
    description: 'Job key (/api/v2/jobs/{slug}).',
    value: (j) => j.slug,
  },
  {
    name: 'posted_at',
    kind: 'timestamp',
    plain: true,
    required: true,
    description: 'When posted; rows are sorted newest first.',
    value: (j) => millis(j.posted_at),
  },
  {
    name: 'title',
    kind: 'string',
    noStatistics: true,
    required: true,
    description: 'Job title.',
    value: (j) => j.title,
  },
  {
    name: 'expires_at',
    kind: 'timestamp',
    plain: true,
    description: 'When it expires.',
    value: (j) => millis(j.expires_at),
  },
  { name: 'company_id', kind: 'string', description: 'company.id.', value: (j) => j.company?.id },
  { name: 'company_slug', kind: 'string', description: 'company.slug.', value: (j) => j.company?.slug },
  { name: 'company_name', kind: 'string', description: 'company.name.', value: (j) => j.company?.name },
  { name: 'company_country', kind: 'string', description: 'company.country.', value: (j) => j.company?.country },
  { name: 'category', kind: 'string', description: 'Category slug.', value: (j) => j.category },
  { name: 'role', kind: 'string', description: 'Role name.', value: (j) => j.role },
  { name: 'level', kind: 'string', description: 'Seniority.', value: (j) => j.level },
  { name: 'contract_type', kind: 'string', description: 'Contract type.', value: (j) => j.contract_type },
  { name: 'schedule_type', kind: 'string', description: 'Schedule type.', value: (j) => j.schedule_type },
  {
    name: 'hours_per_week_min',
    kind: 'int32',
    description: 'Lowest weekly hours.',
    value: (j) => j.hours_per_week_min,
  },
  {
    name: 'hours_per_week_max',
    kind: 'int32',
    description: 'Highest weekly hours.',
    value: (j) => j.hours_per_week_max,
  },
  {
    name: 'work_arrangement',
    kind: 'string',
    required: true,
    description: 'onsite, hybrid or remote.',
    value: (j) => j.work_arrangement,
  },
  { name: 'is_remote', kind: 'boolean', required: true, description: 'Not onsite.', value: (j) => j.is_remote },
  {
    name: 'salary_min',
    kind: 'int64',
    description: 'Lowest salary, smallest currency unit.',
    value: (j) => (j.salary_min === undefined ? undefined : BigInt(j.salary_min)),
  },
  {
    name: 'salary_max',
    kind: 'int64',
    description: 'Highest salary, smallest currency unit.',
    value: (j) => (j.salary_max === undefined ? undefined : BigInt(j.salary_max)),
  },
  { name: 'salary_currency', kind: 'string', description: 'ISO 4217 code.', value: (j) => j.salary_currency },
  { name: 'salary_period', kind: 'string', description: 'year, month or hour.', value: (j) => j.salary_period },
  {
    name: 'office_locations',
    kind: 'strings',
    description: 'Each office: its city, else country, continent or region.',
    value: (j) => placeNames(j.office_locations),
  },
  {
    name: 'remote_allowed',
    kind: 'strings',
    description: 'Where a remote worker may live: each entry’s country, else continent or region.',
    value: (j) => placeNames(j.remote_allowed),
  },
  { name: 'timezones', kind: 'strings', description: 'IANA time zones.', value: (j) => j.timezones },
  { name: 'skills', kind: 'strings', description: 'Skill slugs.', value: (j) => tagSlugs(j.skills) },
  { name: 'stack', kind: 'strings', description: 'Stack slugs.', value: (j) => tagSlugs(j.stack) },
  { name: 'tools', kind: 'strings', description: 'Tool slugs.', value: (j) => tagSlugs(j.tools) },
  {
    name: 'url',
    kind: 'string',
    plain: true,
    noStatistics: true,
    required: true,
    description: 'Public job page.',
    value: (j) => j.url,
  },
  {
    name: 'description',
    kind: 'string',
    plain: true,
    noStatistics: true,
    description: 'Plain-text description.',
    value: (j) => j.description,
  },
]

// hyparquet's SchemaElement, as far as these columns need it.
type SchemaElement = Record<string, unknown> & { name: string }

function schemaOf(column: Column): SchemaElement[] {
  const repetition_type = column.required ? 'REQUIRED' : 'OPTIONAL'
  const { name } = column
  switch (column.kind) {
    case 'string':
      return [{ name, type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type }]
    case 'int32':
      return [{ name, type: 'INT32', repetition_type }]
    case 'int64':
      return [{ name, type: 'INT64', repetition_type }]
    case 'boolean':
      return [{ name, type: 'BOOLEAN', repetition_type }]
    case 'timestamp':
      return [
        {
          name,
          type: 'INT64',
          repetition_type,
          converted_type: 'TIMESTAMP_MILLIS',
          logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MILLIS' },
        },
      ]
    case 'strings':
      return [
        { name, repetition_type: 'OPTIONAL', converted_type: 'LIST', num_children: 1 },
        { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
        { name: 'element', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'REQUIRED' },
      ]
  }
}

const SCHEMA: SchemaElement[] = [
  { name: 'schema', num_children: PARQUET_COLUMNS.length },
  ...PARQUET_COLUMNS.flatMap(schemaOf),
]

export interface ParquetExportResult {
  bytes: number
  rows: number
  /** Hex SHA-256 of the file. */
  sha256: string
}

/** Writes jobs.parquet a row group per `addRowGroup` call; the file is hashed as it is written. */
export class ParquetExportFile {
  private readonly fd: number
  private readonly digest: Hash = createHash('sha256')
  private readonly bytes: ByteWriter
  private readonly writer: ParquetWriter
  private written = 0
  private rows = 0

  constructor(file: string) {
    this.fd = openSync(file, 'w')
    // Holds one row group's bytes at a time: written out after each (its `offset` keeps counting the file's bytes).
    this.bytes = new ByteWriter(1 << 20)
    this.writer = new ParquetWriter({
      writer: this.bytes,
      schema: SCHEMA as never,
      codec: 'SNAPPY',
      createdBy: 'jobsnap',
    })
  }

  /** One row group: the jobs (v2 bodies, parsed) in order. */
  addRowGroup(jobs: V2Job[]): void {
    if (jobs.length === 0) return
    const columnData = PARQUET_COLUMNS.map((column) => ({
      name: column.name,
      data: jobs.map((job) => column.value(job) ?? null),
      // The page index lets a reader skip pages, not only row groups, by date.
      ...(column.name === 'posted_at' ? { columnIndex: true } : {}),
      ...(column.noStatistics ? { statistics: false } : {}),
      ...(column.plain ? { encoding: 'PLAIN' } : {}),
    }))
    this.writer.write({ columnData: columnData as never, rowGroupSize: jobs.length })
    this.rows += jobs.length
    this.flush()
  }

  finish(): ParquetExportResult {
    this.writer.finish()
    this.flush()
    closeSync(this.fd)
    return { bytes: this.written, rows: this.rows, sha256: this.digest.digest('hex') }
  }

  private flush(): void {
    const chunk = new Uint8Array(this.bytes.buffer, 0, this.bytes.index)
    this.digest.update(chunk)
    let done = 0
    while (done < chunk.length) done += writeSync(this.fd, chunk, done, chunk.length - done)
    this.written += chunk.length
    this.bytes.index = 0
  }
}
