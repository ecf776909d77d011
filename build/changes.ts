/**
 * What a new snapshot changed, as public URL paths: the list an operator
 * purges from a CDN after a refresh (written to `changed-paths.txt`).
 */
import { type SnapshotJobChanges, snapshotPaths } from '../core/snapshot.ts'
import { PAGE_SIZE_DEFAULT } from '../core/query.ts'
import { EXPORTS_PATH } from '../core/exports.ts'

/** Public URL paths that serve a snapshot file. v1 pages have several spellings; all are listed. */
function publicPathsOf(file: string): string[] {
  let match = /^v2\/jobs\/(.+)\.json$/.exec(file)
  if (match) return [`/api/v2/jobs/${match[1]}`]
  match = /^v1\/(\d+)\/(\d+)\.json$/.exec(file)
  if (match) {
    const [limit, page] = [Number(match[1]), Number(match[2])]
    const paths = [`/api/v1?page=${page}&limit=${limit}`, `/api/v1?limit=${limit}&page=${page}`]
    if (limit === PAGE_SIZE_DEFAULT) paths.push(`/api/v1?page=${page}`)
    // Page 1 is also asked for without `page` (`?limit=25` included), and at the default size with no parameters at all.
    if (page === 1) paths.push(`/api/v1?limit=${limit}`)
    if (page === 1 && limit === PAGE_SIZE_DEFAULT) paths.push('/api/v1')
    return paths
  }
  if (file === snapshotPaths.openapi) return ['/openapi.yaml']
  // A changed export: its file and the index that lists its hash.
  match = /^exports\/(.+)$/.exec(file)
  if (match) return [`${EXPORTS_PATH}/${match[1]}`, EXPORTS_PATH]
  return []
}

export interface SnapshotChanges {
  added: string[]
  changed: string[]
  removed: string[]
  /** URL paths to purge; ends with wildcard entries for responses computed per query. */
  purge: string[]
}

/**
 * Responses computed per query from the whole snapshot, which any change of
 * jobs or companies can move: job lists, v1 pages of other sizes, companies,
 * filter counts and feeds.
 */
const COMPUTED_PATHS = [
  '/api/v2/jobs',
  '/api/v2/jobs?*',
  '/api/v1?*',
  '/api/v2/companies',
  '/api/v2/companies?*',
  '/api/v2/companies/*',
  '/api/v2/filters',
  '/api/v2/filters?*',
  ...['rss', 'atom', 'json'].flatMap((kind) => [`/feeds/jobs.${kind}`, `/feeds/jobs.${kind}?*`]),
]

/**
 * Compares two manifests' file hashes. With no previous snapshot everything
 * is new. `companiesChanged`: the published companies changed (an employer's
 * profile can change without any job file changing).
 */
export function diffSnapshots(
  previous: Record<string, string> | undefined,
  next: Record<string, string>,
  companiesChanged = false,
): SnapshotChanges {
  const added: string[] = []
  const changed: string[] = []
  const removed: string[] = []
  // for-in, not Object.entries: at 1M jobs the maps hold a million entries each.
  for (const file in next) {
    const before = previous?.[file]
    if (before === undefined) added.push(file)
    else if (before !== next[file]) changed.push(file)
  }
  for (const file in previous) if (next[file] === undefined) removed.push(file)
  const files = [...added, ...changed, ...removed].sort()
  const purge = files.flatMap(publicPathsOf)
  if (companiesChanged || files.some((f) => f.startsWith('v2/') || f.startsWith('v1/'))) purge.push(...COMPUTED_PATHS)
  // What changed since an older snapshot is answered up to the current one, so any change moves every answer.
  if (companiesChanged || files.length > 0) purge.push('/api/v2/changes?*')
  return { added, changed, removed, purge: [...new Set(purge)] }
}

const JOB_FILE = /^v2\/jobs\/(.+)\.json$/

/** The same diff by job: slugs whose v2 file appeared, changed or went, with both hashes (index/changes.json). */
export function jobChanges(
  changes: SnapshotChanges,
  previous: { id: string; hashes: Record<string, string> } | undefined,
  next: Record<string, string>,
): SnapshotJobChanges {
  const hashes: SnapshotJobChanges['hashes'] = {}
  const slugs = (files: string[]) =>
    files
      .flatMap((file) => {
        const slug = JOB_FILE.exec(file)?.[1]
        if (slug !== undefined) hashes[slug] = [previous?.hashes[file] ?? null, next[file] ?? null]
        return slug ?? []
      })
      .sort()
  return {
    previous: previous?.id ?? null,
    added: slugs(changes.added),
    updated: slugs(changes.changed),
    removed: slugs(changes.removed),
    hashes,
  }
}
