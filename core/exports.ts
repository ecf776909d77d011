/**
 * The bulk exports every snapshot carries (README, API: Bulk exports): the
 * whole snapshot in three files, for a mirror to start from (then follow
 * /api/v2/changes) or an analyst to query in place. Build writes them into
 * `exports/` of the snapshot folder, the runtime serves them as they are.
 */
import { z } from 'zod'

/** The files, in the order the index lists them. */
export const EXPORT_FILES = [
  { name: 'jobs.ndjson.gz', content_type: 'application/gzip' },
  { name: 'companies.ndjson.gz', content_type: 'application/gzip' },
  { name: 'jobs.parquet', content_type: 'application/vnd.apache.parquet' },
] as const
export type ExportName = (typeof EXPORT_FILES)[number]['name']

export const EXPORTS_PATH = '/api/v2/exports'

/** Where an export lives in a snapshot folder. */
export const exportPath = (name: string) => `exports/${name}`

const d = <T extends z.ZodType>(schema: T, description: string): T => schema.meta({ description })

/** One export as the manifest records it and the index lists it (plus its URL). */
export const ExportFileRecord = z.object({
  name: d(z.enum(EXPORT_FILES.map(({ name }) => name) as [ExportName, ...ExportName[]]), 'File name.'),
  bytes: d(z.int().min(0), 'Size in bytes, as stored and as downloaded (no Content-Encoding is applied).'),
  rows: d(z.int().min(0), 'Jobs or companies it holds: NDJSON lines, or Parquet rows.'),
  sha256: d(z.string().regex(/^[0-9a-f]{64}$/), 'SHA-256 of the file, hex (as `sha256sum` prints it); also its ETag.'),
  content_type: d(z.string(), 'The Content-Type it is served with.'),
})
export type ExportFileRecord = z.infer<typeof ExportFileRecord>

const EXAMPLE_FILE = {
  name: 'jobs.ndjson.gz',
  bytes: 41_734_512,
  rows: 100_000,
  sha256: '64ba1a747044132db16cd4bc4990e2cddfa01a1f420e23e3bbe37eb0681b6848',
  content_type: 'application/gzip',
  url: '/api/v2/exports/jobs.ndjson.gz',
}

export const V2ExportsResponse = z
  .object({
    snapshot_id: d(
      z.string(),
      'The snapshot the files belong to (also X-Snapshot-Id): poll `/api/v2/changes?since=<it>` after loading them.',
    ),
    built_at: d(z.iso.datetime(), 'When the snapshot was built (the files’ Last-Modified).'),
    files: d(
      z.array(
        ExportFileRecord.extend({
          url: d(z.string(), 'Path to download it from (GET, HEAD, Range requests).'),
        }).meta({ id: 'V2ExportFile', description: 'One bulk export file.', examples: [EXAMPLE_FILE] }),
      ),
      'jobs.ndjson.gz, companies.ndjson.gz and jobs.parquet.',
    ),
  })
  .meta({
    id: 'V2Exports',
    description: 'The bulk exports of the live snapshot: every live job and company in one download each.',
    examples: [
      { snapshot_id: '20261124T182512983Z-140529c3', built_at: '2026-11-24T18:25:12.983Z', files: [EXAMPLE_FILE] },
    ],
  })
export type V2ExportsResponse = z.infer<typeof V2ExportsResponse>

/** The index body for a snapshot's manifest records. */
export function exportsIndex(
  snapshotId: string,
  builtAt: string,
  files: readonly ExportFileRecord[],
): V2ExportsResponse {
  return {
    snapshot_id: snapshotId,
    built_at: builtAt,
    files: files.map((file) => ({ ...file, url: `${EXPORTS_PATH}/${file.name}` })),
  }
}
