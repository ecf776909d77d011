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
import { closeSync, openSync, readFileSync, readSync, writeSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { readColumn } from 'hyparquet/src/column.js'
import { DEFAULT_PARSERS } from 'hyparquet/src/convert.js'
import { ByteWriter, ParquetWriter } from 'hyparquet-writer'
import { writeColumn } from 'hyparquet-writer/src/column.js'
import { encodeNestedValues } from 'hyparquet-writer/src/dremel.js'
import { schemaPathResolver } from 'hyparquet-writer/src/schema.js'
import { contentHash } from '../core/content-hash.ts'
import { openPackedBodies, type PackedBodies } from '../core/packed-bodies.ts'
import { snapshotPaths } from '../core/snapshot.ts'
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
  /** Column chunks written, and of those copied from the previous build's file. */
  chunks: number
  chunksReused: number
}

/**
 * Where a previous build's jobs.parquet and its chunk table are, to copy unchanged column chunks from,
 * and its packed v2 bodies (index/v2-jobs.bin and .len, in the same order), to read a changed job's
 * previous body from.
 */
export interface PreviousParquet {
  file: string
  table: string
  /** The previous snapshot's folder, whose packed v2 bodies are read. */
  bodies?: string
}

type PageIndexes = ParquetWriter['pendingIndexes'][number]
type Leaf = Parameters<typeof encodeNestedValues>[0]
type Encoder = Parameters<typeof writeColumn>[0]['column']

/** Rows per page-size default of hyparquet-writer's own write(), which these chunks must match. */
const PAGE_SIZE = 1048576
const WRITER_VERSION = (
  JSON.parse(
    readFileSync(
      path.join(path.dirname(createRequire(import.meta.url).resolve('hyparquet-writer')), '../package.json'),
      'utf8',
    ),
  ) as { version: string }
).version
/**
 * The chunk table's first line: a table made by another writer version (other bytes for the same values)
 * or for other columns (its chunks are taken by position) is not used.
 */
const CHUNKS_HEADER = `jobsnap-parquet-chunks 2 hyparquet-writer-${WRITER_VERSION} ${createHash('sha256')
  .update(JSON.stringify([SCHEMA, PARQUET_COLUMNS.map(({ plain, noStatistics, name }) => [name, plain, noStatistics])]))
  .digest('base64url')
  .slice(0, 16)}`

/**
 * A column chunk's metadata (and page indexes) as JSON: bigints, bytes and
 * dates tagged so that they come back as they were, and the footer written
 * from them is the same bytes.
 */
function chunkToJson(result: PageIndexes): string {
  return JSON.stringify(result, function (this: unknown, key: string, value: unknown) {
    const raw = (this as Record<string, unknown>)[key]
    if (typeof raw === 'bigint') return { $n: raw.toString() }
    if (raw instanceof Uint8Array) return { $u: Buffer.from(raw).toString('base64') }
    if (raw instanceof Date) return { $d: raw.getTime() }
    return value
  })
}

function chunkFromJson(text: string): PageIndexes {
  return JSON.parse(text, (_key, value: unknown) => {
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      const tagged = value as { $n?: string; $u?: string; $d?: number }
      if (tagged.$n !== undefined) return BigInt(tagged.$n)
      if (tagged.$u !== undefined) return new Uint8Array(Buffer.from(tagged.$u, 'base64'))
      if (tagged.$d !== undefined) return new Date(tagged.$d)
    }
    return value
  }) as PageIndexes
}

/** The same chunk placed `delta` bytes further into the file. */
function moved(result: PageIndexes, delta: bigint): PageIndexes {
  const { chunk, offsetIndex } = result
  chunk.file_offset += delta
  const meta = chunk.meta_data
  if (meta) {
    meta.data_page_offset += delta
    if (meta.dictionary_page_offset !== undefined) meta.dictionary_page_offset += delta
  }
  for (const page of offsetIndex?.page_locations ?? []) page.offset += delta
  return result
}

interface PreviousChunk {
  key: string
  offset: number
  length: number
  json: string
}

/** A previous file's row group: its first row, its rows' content hashes (comma-separated) and its chunks in column order. */
interface PreviousGroup {
  start: number
  hashes: string
  rows: number
  chunks: PreviousChunk[]
}

/** A previous file's column chunks, by the hash of their column and values, and by row group. */
class PreviousChunks {
  private constructor(
    private readonly fd: number,
    private readonly byKey: Map<string, PreviousChunk>,
    readonly groups: PreviousGroup[],
  ) {}

  static open(previous: PreviousParquet | undefined): PreviousChunks | undefined {
    if (!previous) return undefined
    let text: string
    let fd: number
    try {
      text = readFileSync(previous.table, 'utf8')
      fd = openSync(previous.file, 'r')
    } catch {
      return undefined
    }
    const lines = text.split('\n')
    if (lines[0] !== CHUNKS_HEADER) {
      closeSync(fd)
      return undefined
    }
    const byKey = new Map<string, PreviousChunk>()
    const groups: PreviousGroup[] = []
    let start = 0
    for (const line of lines.slice(1)) {
      if (line === '') continue
      const [key, offset, length, json] = line.split('\t')
      if (key === 'rows') {
        groups.push({ start, rows: Number(offset), hashes: length!, chunks: [] })
        start += Number(offset)
        continue
      }
      const chunk = { key: key!, offset: Number(offset), length: Number(length), json: json! }
      byKey.set(chunk.key, chunk)
      groups.at(-1)?.chunks.push(chunk)
    }
    return new PreviousChunks(fd, byKey, groups)
  }

  /** The chunk's bytes and metadata (at its old place) when the previous file has it. */
  read(key: string): { bytes: Uint8Array; offset: number; result: PageIndexes } | undefined {
    const found = this.byKey.get(key)
    return found && this.readChunk(found)
  }

  readChunk(found: PreviousChunk): { bytes: Uint8Array; offset: number; result: PageIndexes } | undefined {
    const bytes = Buffer.allocUnsafe(found.length)
    for (let done = 0; done < found.length; ) {
      const read = readSync(this.fd, bytes, done, found.length - done, found.offset + done)
      if (read === 0) return undefined
      done += read
    }
    return { bytes, offset: found.offset, result: chunkFromJson(found.json) }
  }

  close(): void {
    closeSync(this.fd)
  }
}

/** The previous snapshot's packed v2 bodies, read one by one by position; undefined when they cannot be opened. */
function openPreviousBodies(dir: string | undefined): PackedBodies | undefined {
  if (!dir) return undefined
  try {
    return openPackedBodies(dir, snapshotPaths.v2Bodies)
  } catch {
    return undefined
  }
}

/** Two column values, as the writer takes them, are the same. */
function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false
  return a.every((item, index) => item === b[index])
}

/** A row group's rows that differ from the previous file's row group at the same place, with their previous jobs. */
interface GroupDiff {
  group: PreviousGroup
  changed: number[]
  before: V2Job[]
}

/**
 * A column chunk's key: how the column is encoded (its schema and the encoder's options, so that
 * a change to them copies nothing) and its values, each with its type, in order.
 */
function chunkKey(column: Column, encoding: string, values: unknown[]): string {
  const text =
    column.kind === 'int64' || column.kind === 'timestamp'
      ? values.map((value) => (value === null ? '' : String(value))).join(',')
      : JSON.stringify(values)
  return createHash('sha256').update(`${encoding}\0${values.length}\0`).update(text).digest('base64url').slice(0, 22)
}

/** The encoder's options (the compressors are functions: their codec names them), as text. */
function encodingOf(encoder: Encoder): string {
  const { compressors: _functions, ...options } = encoder
  return JSON.stringify(options)
}

/**
 * Writes jobs.parquet a row group per `addRowGroup` call; the file is hashed as it is written.
 *
 * Each column chunk is encoded as hyparquet-writer's ParquetWriter.write encodes it, unless the
 * previous build's file has a chunk of the same column with the same values: then that chunk's
 * bytes are copied and its metadata moved to the new place, which is what encoding it again
 * would give, at a fraction of the cost. After a change to 1% of the jobs, nearly every row
 * group has a changed row, but most columns of it (all but the title after a retitle) do not.
 * A table of the chunks (private, under index/) keys each for the next build.
 */
export class ParquetExportFile {
  private readonly fd: number
  private readonly digest: Hash = createHash('sha256')
  private readonly bytes: ByteWriter
  private readonly writer: ParquetWriter
  private readonly leaves: Leaf[]
  private readonly encoders: Encoder[]
  private readonly encodings: string[]
  private readonly previous: PreviousChunks | undefined
  private readonly previousBodies: PackedBodies | undefined
  private groups = 0
  private table = `${CHUNKS_HEADER}\n`
  private written = 0
  private rows = 0
  private chunksReused = 0
  private chunks = 0

  constructor(
    file: string,
    private readonly tableFile?: string,
    previous?: PreviousParquet,
  ) {
    this.fd = openSync(file, 'w')
    // Holds one row group's bytes at a time: written out after each (its `offset` keeps counting the file's bytes).
    this.bytes = new ByteWriter(1 << 20)
    this.writer = new ParquetWriter({
      writer: this.bytes,
      schema: SCHEMA as never,
      codec: 'SNAPPY',
      createdBy: 'jobsnap',
    })
    const resolve = schemaPathResolver(SCHEMA as never)
    this.leaves = PARQUET_COLUMNS.map((column) => {
      const path = resolve([column.name])
      while (path.at(-1)!.children.length > 0) path.push(path.at(-1)!.children[0]!)
      return path
    })
    // As ParquetWriter.write makes them from the options each column was given there.
    this.encoders = PARQUET_COLUMNS.map((column, index) => {
      const schemaPath = this.leaves[index]!.map((node) => node.element)
      return {
        columnName: schemaPath
          .slice(1)
          .map((element) => element.name)
          .join('.'),
        element: schemaPath.at(-1)!,
        schemaPath,
        codec: this.writer.codec,
        compressors: this.writer.compressors,
        stats: column.noStatistics ? false : this.writer.statistics,
        statisticsTruncateLength: this.writer.statisticsTruncateLength,
        pageSize: PAGE_SIZE,
        dictionarySize: undefined,
        // The page index lets a reader skip pages, not only row groups, by date.
        columnIndex: column.name === 'posted_at',
        offsetIndex: true,
        encoding: column.plain ? 'PLAIN' : undefined,
        bloomFilter: undefined,
      }
    })
    this.encodings = this.encoders.map(encodingOf)
    this.previous = tableFile ? PreviousChunks.open(previous) : undefined
    this.previousBodies = this.previous && openPreviousBodies(previous?.bodies)
  }

  /**
   * One row group: the jobs' v2 bodies in order, and their content hashes. A body is parsed only
   * where needed: when the previous file's row group at the same place has the same number of
   * rows and most of them are the same jobs (same hashes), only the changed rows are parsed, with
   * their previous bodies; a column whose values at those rows did not change is copied from the
   * previous row group, and a changed text column is its previous chunk's values, decoded, with
   * the changed rows' new values put in. Otherwise every body is parsed and each chunk keyed by
   * its values, as a build from scratch does. A body given as a number is the one at that position
   * of a previous snapshot's packed bodies, read by `previousBody` only when it is parsed.
   */
  addRowGroup(
    bodies: readonly (Uint8Array | number)[],
    hashes: string[],
    previousBody?: (position: number) => Uint8Array,
  ): void {
    if (bodies.length === 0) return
    const writer = this.writer
    const groupStart = this.bytes.offset
    const columns: PageIndexes['chunk'][] = []
    const jobs: V2Job[] = new Array(bodies.length)
    const parse = (row: number) => {
      if (jobs[row] === undefined) {
        const body = bodies[row]!
        const bytes = typeof body === 'number' ? previousBody!(body) : body
        jobs[row] = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString()) as V2Job
      }
      return jobs[row]!
    }
    let all: V2Job[] | undefined
    const parseAll = () => {
      all ??= bodies.map((_, row) => parse(row))
      return all
    }
    const diff = this.diff(bodies.length, hashes)
    for (const [index, column] of PARQUET_COLUMNS.entries()) {
      const offset = this.bytes.offset
      let copied: ReturnType<PreviousChunks['read']>
      let key = ''
      let values: unknown[] | undefined
      if (diff) {
        const previous = diff.group.chunks[index]!
        const after = diff.changed.map((row) => column.value(parse(row)) ?? null)
        const before = diff.before.map((job) => column.value(job) ?? null)
        if (after.every((value, at) => sameValue(value, before[at]))) {
          copied = this.previous!.readChunk(previous)
          key = previous.key
        } else values = this.patched(index, previous, diff, before, after)
      }
      if (!copied) {
        values ??= parseAll().map((job) => column.value(job) ?? null)
        key = this.tableFile ? chunkKey(column, this.encodings[index]!, values) : ''
        copied = this.previous?.read(key)
      }
      let result: PageIndexes
      if (copied) {
        this.bytes.appendBytes(copied.bytes)
        result = moved(copied.result, BigInt(offset - copied.offset))
        this.chunksReused++
      } else {
        result = writeColumn({
          writer: this.bytes,
          column: this.encoders[index]!,
          pageData: encodeNestedValues(this.leaves[index]!, values as never),
        })
      }
      this.chunks++
      // Before finish() adds the page indexes' places to it: a copy gets its own.
      if (this.tableFile) {
        if (index === 0) this.table += `rows\t${bodies.length}\t${hashes.join(',')}\n`
        this.table += `${key}\t${offset}\t${this.bytes.offset - offset}\t${chunkToJson(result)}\n`
      }
      columns.push(result.chunk)
      writer.pendingIndexes.push(result)
    }
    let total_byte_size = 0n
    for (const { meta_data } of columns) total_byte_size += meta_data?.total_uncompressed_size ?? 0n
    writer.num_rows += BigInt(bodies.length)
    writer.row_groups.push({
      columns,
      total_byte_size,
      num_rows: BigInt(bodies.length),
      total_compressed_size: BigInt(this.bytes.offset - groupStart),
    })
    this.rows += bodies.length
    this.groups++
    this.flush()
  }

  /**
   * The rows that differ from the previous file's row group at the same place, and their
   * previous jobs; undefined when there is no such group, it has another number of rows, too many
   * differ (jobs were added or removed before it, so rows moved), or a previous body is not there.
   */
  private diff(rows: number, hashes: string[]): GroupDiff | undefined {
    const group = this.previous?.groups[this.groups]
    if (!group || !this.previousBodies || group.rows !== rows || group.chunks.length !== PARQUET_COLUMNS.length)
      return undefined
    const previousHashes = group.hashes.split(',')
    const changed: number[] = []
    for (let row = 0; row < rows; row++) {
      if (previousHashes[row] === hashes[row]) continue
      changed.push(row)
      if (changed.length > rows / 4) return undefined
    }
    const before: V2Job[] = []
    for (const row of changed) {
      const position = group.start + row
      const body = position < this.previousBodies.size ? this.previousBodies.body(position) : undefined
      if (!body || contentHash(body) !== previousHashes[row]) return undefined
      before.push(JSON.parse(body.toString()) as V2Job)
    }
    return { group, changed, before }
  }

  /**
   * A changed text column's values: its previous chunk's, decoded, with the changed rows' new
   * values put in. Undefined for other kinds of column, or when the decoded chunk does not hold
   * at the changed rows what their previous bodies say (then the bodies are parsed instead).
   */
  private patched(
    index: number,
    previous: PreviousChunk,
    diff: GroupDiff,
    before: unknown[],
    after: unknown[],
  ): unknown[] | undefined {
    const column = PARQUET_COLUMNS[index]!
    if (column.kind !== 'string') return undefined
    const chunk = this.previous!.readChunk(previous)
    if (!chunk) return undefined
    const leaf = this.leaves[index]!
    const { data } = readColumn(
      { view: new DataView(chunk.bytes.buffer, chunk.bytes.byteOffset, chunk.bytes.byteLength), offset: 0 },
      { groupStart: 0, selectStart: 0, selectEnd: diff.group.rows, groupRows: diff.group.rows },
      {
        pathInSchema: [column.name],
        type: 'BYTE_ARRAY',
        element: leaf.at(-1)!.element as never,
        schemaPath: leaf as never,
        codec: 'SNAPPY',
        parsers: DEFAULT_PARSERS,
        utf8: true,
      },
    )
    const values: unknown[] = []
    for (const page of data as ArrayLike<unknown>[])
      for (let at = 0; at < page.length; at++) values.push(page[at] ?? null)
    if (values.length !== diff.group.rows) return undefined
    for (const [at, row] of diff.changed.entries()) {
      if (values[row] !== before[at]) return undefined
      values[row] = after[at]
    }
    return values
  }

  finish(): ParquetExportResult {
    this.writer.finish()
    this.flush()
    closeSync(this.fd)
    this.previous?.close()
    this.previousBodies?.close()
    if (this.tableFile) {
      const table = openSync(this.tableFile, 'w')
      writeSync(table, this.table)
      closeSync(table)
    }
    return {
      bytes: this.written,
      rows: this.rows,
      sha256: this.digest.digest('hex'),
      chunks: this.chunks,
      chunksReused: this.chunksReused,
    }
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
