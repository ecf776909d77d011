/**
 * The snapshot on disk: the contract between `jobsnap build` (writer) and the
 * runtime (reader). Layout, under `<dist>/snapshots/<id>/`:
 *
 *   manifest.json               SnapshotManifest: id, built-at, counts, content hashes
 *   openapi.yaml(.gz|.br)       the generated OpenAPI 3.1 document
 *   v1/<limit>/<page>.json(...) precomputed v1 pages for each PRECOMPUTED_V1_LIMITS
 *   v2/jobs/<slug>.json(...)    one v2 job each, exact response bytes
 *   index/jobs.bin              the job index laid out as the server holds it (typed
 *                               arrays; core/job-index-file.ts): what a server loads
 *   index/jobs.json             only in snapshots built before index/jobs.bin existed:
 *                               SnapshotJobIndex, one job per line (serializeJobIndex)
 *   index/companies.json        full company profiles for the MCP tools
 *   index/terms.json            full-text vocabulary and posting counts (core/search.ts)
 *   index/postings.bin          full-text posting lists, little-endian uint32
 *   index/v2-jobs.bin           every v2 job body again, date order, joined by commas,
 *   index/v2-jobs.len           with its byte lengths (little-endian uint32): the server
 *                               reads bodies from it by position and stitches list pages
 *   index/v1-jobs.bin / .len    the same for v1 jobs: a v1 page is one contiguous range,
 *                               read with one positional read
 *   exports/jobs.ndjson.gz      the bulk exports (core/exports.ts): every live job's v2 body,
 *   exports/companies.ndjson.gz every listed company's profile, one a line, gzip members;
 *   exports/jobs.parquet        the jobs as a Parquet table (build/export-parquet.ts)
 *   index/*.ndjson.gz.members   each gzip export's members, for the next build to copy from
 *
 * `<dist>/current` is a relative symlink to the published snapshot; the build
 * swaps it atomically, the runtime follows it.
 */
import { readFile, readlink } from 'node:fs/promises'
import path from 'node:path'
import { z } from 'zod'
import { indexFileHash } from './content-hash.ts'
import { ExportFileRecord } from './exports.ts'
import { DatasetCompany } from './schema/dataset.ts'

/**
 * 2: the packed job bodies (index/v2-jobs.*, index/v1-jobs.*) that servers read pages from.
 * 3: search terms without accents (core/fold.ts): a server folding its queries finds nothing accented in a format 2 index.
 * 4: office place keys (`o:XX`, placeKey.office): office_country finds nothing in a format 3 index.
 *    and the bulk exports (exports/, listed in the manifest's `exports`), which a server serves at /api/v2/exports.
 * 5: the per-job files' hashes moved out of the manifest into index/job-files.txt (`job_files`): a million lines at
 *    1M jobs that every server read and skipped at every load. A format 4 manifest lists them in `files`.
 *    And index/company-columns.json, the companies' table fields, which a server reads instead of parsing them all.
 */
export const SNAPSHOT_FORMAT = 5
export const PRECOMPUTED_V1_LIMITS = [25, 100] as const
export const CURRENT_LINK = 'current'
export const SNAPSHOTS_DIR = 'snapshots'
/**
 * The ids of the snapshots pruned from `<dist>/snapshots`, one a line, the
 * latest last: the change feed answers 410 (no longer kept) for them, where an
 * id it never saw gets 404. Ids alone cannot tell: after a rollback, a pruned
 * snapshot can be newer than one still kept.
 */
export const PRUNED_SNAPSHOTS_FILE = 'pruned-snapshots.txt'

/** The ids pruned from `distDir`, as far as the file remembers (none when there is no file). */
export async function readPrunedSnapshots(distDir: string): Promise<string[]> {
  return (await readSnapshotIdList(distDir, PRUNED_SNAPSHOTS_FILE)) ?? []
}

/** A list of snapshot ids kept in `file` beside `current`, one a line; undefined when there is no such file. */
export async function readSnapshotIdList(distDir: string, file: string): Promise<string[] | undefined> {
  const text = await readFile(path.join(distDir, file), 'utf8').catch(() => undefined)
  return text?.split('\n').filter((line) => line !== '')
}
/**
 * The compressed encodings, in the server's order of preference. `suffix` names
 * a precompressed copy on disk next to its file (`openapi.yaml.br`), the name
 * nginx's `gzip_static`/`brotli_static` look for; `etagSuffix` marks the
 * ETag of a compressed representation (`"<hash>-br"`), so a cache never
 * mistakes compressed bytes for identity ones.
 */
export const ENCODINGS = [
  { name: 'br', suffix: '.br', etagSuffix: '-br' },
  { name: 'gzip', suffix: '.gz', etagSuffix: '-gz' },
] as const
export type Encoding = (typeof ENCODINGS)[number]['name']

/** Where the precompressed copy of `file` in `encoding` lives (the file itself for identity). */
export function encodedPath(file: string, encoding?: Encoding): string {
  const found = encoding && ENCODINGS.find((candidate) => candidate.name === encoding)
  return found ? file + found.suffix : file
}

/** True for a precompressed copy (`*.br`, `*.gz`), which is never a file of its own. */
export function isCompressedCopy(file: string): boolean {
  return ENCODINGS.some(({ suffix }) => file.endsWith(suffix))
}

export const SnapshotManifest = z.object({
  format: z.literal(SNAPSHOT_FORMAT),
  snapshot_id: z.string(),
  built_at: z.iso.datetime(),
  site_url: z.string(),
  rates_as_of: z.iso.date(),
  counts: z.object({
    records_jobs: z.int(),
    live_jobs: z.int(),
    closed_jobs: z.int(),
    expired_jobs: z.int(),
    companies: z.int(),
  }),
  v1_limits: z.array(z.int()),
  /**
   * Relative path -> content hash (identity encoding) of every public file but the per-job ones
   * (`v2/jobs/<slug>.json`), which `job_files` lists.
   */
  files: z.record(z.string(), z.string()),
  /**
   * The per-job files' hashes: index/job-files.txt holds one `<slug>\t<content hash>` line per job file,
   * in the order the build wrote them (newest job first); `count` lines, and `sha256` (base64url) of the
   * whole file. Only builds read it (to reuse files and find what changed); servers never need it.
   */
  job_files: z.object({ count: z.int(), sha256: z.string() }),
  /**
   * Relative path -> SHA-256 (base64url) of each index file as written. The
   * build validated those files against their schemas; the runtime checks
   * these hashes instead of validating them again (~0.5 s at 100k jobs).
   * Absent in snapshots built before it existed: those are validated.
   */
  index_hashes: z.record(z.string(), z.string()).optional(),
  /** The bulk exports under exports/ (core/exports.ts): size, rows and SHA-256 of each. */
  exports: z.array(ExportFileRecord),
})
export type SnapshotManifest = z.infer<typeof SnapshotManifest>

/** The manifest without its (large) file map, which the runtime checks with a plain loop. */
export const SnapshotManifestHead = SnapshotManifest.omit({ files: true })

/** A snapshot id: the build time (UTC, to the millisecond) and a content digest, e.g. 20261124T182512983Z-140529c3. */
export const SNAPSHOT_ID_PATTERN = /^\d{8}T\d{9}Z-[0-9a-f]{8}(-\d{2,})?$/

/**
 * index/changes.json: the jobs (by slug) a snapshot changed against `previous`,
 * the snapshot published when it was built (null for a first build: then
 * every job is added). Snapshots chain through `previous`; the change feed
 * composes the links between two of them.
 */
export const SnapshotJobChanges = z.object({
  previous: z.string().nullable(),
  added: z.array(z.string()),
  updated: z.array(z.string()),
  removed: z.array(z.string()),
  /** Each listed slug's file hash before and after (null where it did not exist): a job edited and edited back is no change. */
  hashes: z.record(z.string(), z.tuple([z.string().nullable(), z.string().nullable()])),
})
export type SnapshotJobChanges = z.infer<typeof SnapshotJobChanges>

/** One live job as the query engine sees it. Kept small: it is held in memory for every job. */
export const IndexedJob = z.object({
  id: z.string(),
  slug: z.string(),
  company_id: z.string(),
  /** Epoch milliseconds. */
  posted_at: z.number(),
  expires_at: z.number().optional(),
  category: z.string().optional(),
  level: z.string().optional(),
  schedule: z.string().optional(),
  work_arrangement: z.string(),
  /** Slugs of skills, stack and tools together. */
  tags: z.array(z.string()),
  /** Location keys, see `placeKeysForJob`. */
  places: z.array(z.string()),
  /** Annualised USD range. */
  salary_low: z.number().optional(),
  salary_high: z.number().optional(),
  /** Content hash of the v2 file (the ETag). */
  hash: z.string(),
})
export type IndexedJob = z.infer<typeof IndexedJob>

export const SnapshotJobIndex = z.object({
  /** Live jobs, newest first, ties by id: the `sort=date` order. */
  jobs: z.array(IndexedJob),
  /** Positions into `jobs`, highest salary first, no salary last, ties newest first. */
  salary_order: z.array(z.int()),
})
export type SnapshotJobIndex = z.infer<typeof SnapshotJobIndex>

/*
 * The large files a server loads on a hot swap (the job index, companies, the
 * manifest's file map) are plain JSON laid out one entry per line, so a
 * server can parse them a slice of lines at a time and serve requests in
 * between (JSON.stringify escapes newlines inside strings, so a newline
 * always ends an entry). Any JSON reader still takes them whole.
 */

/** A JSON array, one element per line. */
export function jsonArrayByLine(items: readonly unknown[]): string {
  return items.length === 0 ? '[]\n' : `[\n${items.map((item) => JSON.stringify(item)).join(',\n')}\n]\n`
}

/**
 * Parses the entries between byte offsets `start` and `end`, one per line
 * (each but the last followed by a comma), `perSlice` lines at a time:
 * arrays for `[]`, objects for `{}`. Lazy, so a caller can yield between slices.
 */
function* entriesInSlices<T>(
  bytes: Buffer,
  start: number,
  end: number,
  brackets: '[]' | '{}',
  perSlice = 1000,
): Generator<T> {
  let from = start
  while (from < end) {
    let to = from
    for (let lines = 0; lines < perSlice && to < end; lines++) {
      const newline = bytes.indexOf(0x0a, to)
      to = newline < 0 || newline >= end ? end : newline + 1
    }
    let text = bytes.toString('utf8', from, to).trim()
    if (text.endsWith(',')) text = text.slice(0, -1)
    if (text) yield JSON.parse(brackets[0] + text + brackets[1]) as T
    from = to
  }
}

/**
 * The elements of the array text `bytes[start, end)` as jsonArrayByLine lays
 * it out (without its final newline), in slices; undefined for another layout
 * (an older build: parse it whole).
 */
export function arrayInSlices<T>(
  bytes: Buffer,
  start = 0,
  end = bytes.length - 1,
  perSlice?: number,
): Iterable<T[]> | undefined {
  if (end - start === 2 && bytes.toString('utf8', start, end) === '[]') return []
  if (
    end - start < 4 ||
    bytes.toString('utf8', start, start + 2) !== '[\n' ||
    bytes.toString('utf8', end - 2, end) !== '\n]'
  )
    return undefined
  return entriesInSlices<T[]>(bytes, start + 2, end - 1, '[]', perSlice)
}

const JOB_INDEX_HEAD = '{"salary_order":'
const JOB_INDEX_JOBS = ',"jobs":'

/** index/jobs.json: salary_order on the first line, then the jobs one per line. */
export function serializeJobIndex(index: SnapshotJobIndex): string {
  return `${JOB_INDEX_HEAD}${JSON.stringify(index.salary_order)}${JOB_INDEX_JOBS}${jsonArrayByLine(index.jobs).trimEnd()}}\n`
}

/**
 * The salary order and the jobs of an index/jobs.json written by
 * serializeJobIndex, the jobs in slices; undefined for another layout (an
 * older build: parse it whole).
 */
export function readJobIndexInSlices(
  bytes: Buffer,
  jobsPerSlice?: number,
): { salaryOrder: number[]; slices: Iterable<IndexedJob[]> } | undefined {
  const headEnd = bytes.indexOf(JOB_INDEX_JOBS)
  if (headEnd < 0 || bytes.toString('utf8', 0, JOB_INDEX_HEAD.length) !== JOB_INDEX_HEAD) return undefined
  const salaryOrder: unknown = JSON.parse(bytes.toString('utf8', JOB_INDEX_HEAD.length, headEnd))
  // What follows is jsonArrayByLine's text, then `}` and a newline.
  if (bytes.toString('utf8', bytes.length - 3) !== ']}\n' || !Array.isArray(salaryOrder)) return undefined
  const slices = arrayInSlices<IndexedJob>(bytes, headEnd + JOB_INDEX_JOBS.length, bytes.length - 2, jobsPerSlice)
  if (slices === undefined) return undefined
  return { salaryOrder: salaryOrder as number[], slices }
}

/** manifest.json: indented, which puts each entry of its file map on its own line. */
export function serializeManifest(manifest: SnapshotManifest): string {
  return JSON.stringify(manifest, null, 1)
}

const MANIFEST_FILES_OPEN = '\n "files": {\n'
const MANIFEST_FILES_CLOSE = '\n }'

/**
 * A manifest as serializeManifest writes it, parsed as its small head (the
 * file map left empty) plus the file map's entries in slices; undefined for
 * another layout (parse it whole).
 */
export function readManifestInSlices(
  bytes: Buffer,
  entriesPerSlice = 5000,
): { head: unknown; files: Iterable<Record<string, unknown>> } | undefined {
  const open = bytes.indexOf(MANIFEST_FILES_OPEN)
  if (open < 0) return undefined
  const entriesStart = open + MANIFEST_FILES_OPEN.length
  // Entries are indented by two spaces, so the first newline-space-brace closes the map.
  const close = bytes.indexOf(MANIFEST_FILES_CLOSE, entriesStart - 1)
  if (close < 0) return undefined
  const head: unknown = JSON.parse(bytes.toString('utf8', 0, entriesStart - 1) + bytes.toString('utf8', close))
  return {
    head,
    files: entriesInSlices<Record<string, unknown>>(bytes, entriesStart, close + 1, '{}', entriesPerSlice),
  }
}

export const IndexedCompany = DatasetCompany.omit({ description_html: true, total_raised: true }).extend({
  live_jobs: z.int(),
})
export type IndexedCompany = z.infer<typeof IndexedCompany>
export const SnapshotCompanies = z.array(IndexedCompany)

/**
 * Location keys: `c:XX` country (an office there, or remote from there), `o:XX` an office there,
 * `k:EU` continent, `r:EMEA` region (`r:Worldwide` too).
 */
export const placeKey = {
  country: (code: string) => `c:${code}`,
  office: (code: string) => `o:${code}`,
  continent: (code: string) => `k:${code}`,
  region: (name: string) => `r:${name}`,
}

/**
 * Response bodies packed into one file, in date order, joined by commas, so
 * that positions i..j are one contiguous range that is already the inside of
 * a JSON array; `lengths` holds each body's byte length (little-endian
 * uint32, the comma not counted).
 *
 * Or in two layers (core/packed-bodies.ts BodyLayers), when `starts` is
 * there: `bodies` then holds only the bodies that `base`, a relative symlink
 * to an earlier snapshot's whole `bodies` file, does not; `starts` holds
 * where each position's body starts (little-endian float64: in the base, or
 * past it in `bodies`).
 */
export interface PackedBodiesPaths {
  bodies: string
  lengths: string
  base: string
  starts: string
}

/** A layered pair's `base` link target for the snapshot whose whole file it is (relative to `index/`). */
export const bodiesBaseTarget = (baseId: string, paths: PackedBodiesPaths): string => `../../${baseId}/${paths.bodies}`

export const snapshotPaths = {
  manifest: 'manifest.json',
  openapi: 'openapi.yaml',
  jobIndex: 'index/jobs.json',
  /** The same index as typed arrays, which a server loads without parsing (core/job-index-file.ts). */
  jobIndexBinary: 'index/jobs.bin',
  companies: 'index/companies.json',
  /** The companies' fields a server's table holds, a column a line (core/company-columns.ts). */
  companyColumns: 'index/company-columns.json',
  searchTerms: 'index/terms.json',
  searchPostings: 'index/postings.bin',
  v2Bodies: {
    bodies: 'index/v2-jobs.bin',
    lengths: 'index/v2-jobs.len',
    base: 'index/v2-jobs.base.bin',
    starts: 'index/v2-jobs.at',
  } satisfies PackedBodiesPaths,
  v1Bodies: {
    bodies: 'index/v1-jobs.bin',
    lengths: 'index/v1-jobs.len',
    base: 'index/v1-jobs.base.bin',
    starts: 'index/v1-jobs.at',
  } satisfies PackedBodiesPaths,
  /** The build's memory of each record (build/record-cache.ts); the runtime never reads it. */
  buildCache: 'index/build-cache.txt',
  /** Which jobs this snapshot added, updated and removed against the one it was built over. */
  changes: 'index/changes.json',
  /** Each per-job public file's slug and content hash, a line each (the manifest's `job_files`). */
  jobFiles: 'index/job-files.txt',
  v1Page: (limit: number, page: number) => `v1/${limit}/${page}.json`,
  v2Job: (slug: string) => `v2/jobs/${slug}.json`,
}

/**
 * Calls `use` with each job file's path and content hash that index/job-files.txt (`bytes`) lists, in
 * its order, and returns true; false when the file is not the one the manifest's `job_files` describes (its
 * hash is checked first, so a changed file is refused before any call; a caller drops what it was given).
 */
export function eachJobFile(
  bytes: Buffer,
  listed: { count: number; sha256: string },
  use: (jobFile: string, hash: string) => void,
): boolean {
  if (indexFileHash(bytes) !== listed.sha256) return false
  const text = bytes.toString('latin1')
  let count = 0
  for (let start = 0; start < text.length; count++) {
    const end = text.indexOf('\n', start)
    const tab = text.indexOf('\t', start)
    if (end < 0 || tab < 0 || tab > end) return false
    use(snapshotPaths.v2Job(text.slice(start, tab)), text.slice(tab + 1, end))
    start = end + 1
  }
  return count === listed.count
}

/** The v1 `usage` courtesy notice (one sentence: free to use, please link back). */
export function v1UsageNotice(siteUrl: string): string {
  return `jobsnap is free to use; if you show these jobs in a public product, please link back to ${siteUrl}.`
}

/** What goes before and after the comma-joined jobs of a v1 list page. */
export function v1PageFrame(usage: string, page: number, limit: number, total: number): { head: string; tail: string } {
  return {
    head: `{"usage":${JSON.stringify(usage)},"page":${page},"total":${total},"has_more":${page * limit < total},"jobs":[`,
    tail: ']}',
  }
}

/** The id `current` points at, or undefined when nothing is published. */
export async function publishedSnapshotId(distDir: string): Promise<string | undefined> {
  try {
    return path.basename(await readlink(path.join(distDir, CURRENT_LINK)))
  } catch {
    return undefined
  }
}
