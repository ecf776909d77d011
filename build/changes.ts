/**
 * What a new snapshot changed, as public URL paths: the list an operator
 * purges from a CDN after a refresh (written to `changed-paths.txt`).
 */
import { ALL_TAG, companyTag, DOCS_TAG, EXPORTS_TAG, jobTag, LISTS_TAG, v1PageTag } from '../core/cache-tags.ts'
import { type IndexedCompany, type SnapshotJobChanges, snapshotPaths } from '../core/snapshot.ts'
import { PAGE_SIZE_DEFAULT } from '../core/query.ts'
import { EXPORTS_PATH } from '../core/exports.ts'
import { type JobFileChanges, jobFileSlug } from './job-files.ts'

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
  match = EXPORT_FILE.exec(file)
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
 * profile can change without any job file changing). `jobs`: what changed
 * among the job files, which the build compares by their lists, not in these
 * maps (job-files.ts).
 */
export function diffSnapshots(
  previous: ReadonlyMap<string, string> | undefined,
  next: ReadonlyMap<string, string>,
  companiesChanged = false,
  jobs?: Pick<JobFileChanges, 'added' | 'changed' | 'removed'>,
): SnapshotChanges {
  const added: string[] = [...(jobs?.added ?? [])]
  const changed: string[] = [...(jobs?.changed ?? [])]
  const removed: string[] = [...(jobs?.removed ?? [])]
  let kept = 0
  for (const [file, hash] of next) {
    const before = previous?.get(file)
    if (before === undefined) added.push(file)
    else {
      if (before !== hash) changed.push(file)
      kept++
    }
  }
  if (previous && kept !== previous.size) for (const file of previous.keys()) if (!next.has(file)) removed.push(file)
  const files = [...added, ...changed, ...removed].sort()
  const purge = files.flatMap(publicPathsOf)
  if (companiesChanged || files.some((f) => f.startsWith('v2/') || f.startsWith('v1/'))) purge.push(...COMPUTED_PATHS)
  // What changed since an older snapshot is answered up to the current one, so any change moves every answer.
  if (companiesChanged || files.length > 0) purge.push('/api/v2/changes?*')
  return { added, changed, removed, purge: [...new Set(purge)] }
}

/** The same diff by job: slugs whose v2 file appeared, changed or went, with both hashes (index/changes.json). */
export function jobChanges(previousId: string | undefined, jobs: JobFileChanges): SnapshotJobChanges {
  const slugs = (files: string[]) => files.map((file) => jobFileSlug(file)!).sort()
  return {
    previous: previousId ?? null,
    added: slugs(jobs.added),
    updated: slugs(jobs.changed),
    removed: slugs(jobs.removed),
    hashes: jobs.hashes,
  }
}

/** What else a publish changed, beyond the public files diffSnapshots compares. */
export interface TagChangeContext {
  /** Nothing was published before (or it could not be read): every cached answer is stale. */
  first: boolean
  /** Slugs of the companies whose published profile was added, changed or removed. */
  companies: readonly string[]
  /** The job index changed (what lists are computed from: an exchange rate, say, moves salary filters). */
  jobIndexChanged: boolean
}

/**
 * The cache tags a publish makes stale (changed-tags.txt, sent by `jobsnap purge`):
 * each added, updated or removed job and company, each changed v1 page,
 * `lists` when any job or company changed, `docs` when the OpenAPI document
 * did; only `all` for the first publish. Sorted, none twice.
 */
export function changedTags(changes: SnapshotChanges, context: TagChangeContext): string[] {
  if (context.first) return [ALL_TAG]
  const tags = new Set<string>()
  let jobsChanged = context.jobIndexChanged
  for (const file of [...changes.added, ...changes.changed, ...changes.removed]) {
    const job = jobFileSlug(file)
    const page = V1_FILE.exec(file)
    if (job !== undefined) {
      tags.add(jobTag(job))
      jobsChanged = true
    } else if (page) {
      tags.add(v1PageTag(Number(page[1]), Number(page[2])))
      jobsChanged = true
    } else if (file === snapshotPaths.openapi) tags.add(DOCS_TAG)
    else if (EXPORT_FILE.test(file)) {
      // The files, and the index that lists their sizes and hashes (tagged `lists`).
      tags.add(EXPORTS_TAG)
      tags.add(LISTS_TAG)
    }
  }
  for (const slug of context.companies) tags.add(companyTag(slug))
  if (jobsChanged || context.companies.length > 0) tags.add(LISTS_TAG)
  return [...tags].sort()
}

const V1_FILE = /^v1\/(\d+)\/(\d+)\.json$/
/** A bulk export in the snapshot folder (exports/<name>). */
const EXPORT_FILE = /^exports\/(.+)$/

/**
 * Slugs of the companies whose published profile differs between two
 * snapshots' company indexes (one appearing or going counts): the live job
 * count is part of the profile, so a company whose jobs came or went is one.
 */
export function changedCompanies(previous: readonly { slug: string }[], next: readonly IndexedCompany[]): string[] {
  const before = new Map(previous.map((company) => [company.slug, JSON.stringify(company)]))
  const changed: string[] = []
  for (const company of next) {
    const was = before.get(company.slug)
    before.delete(company.slug)
    if (was !== JSON.stringify(company)) changed.push(company.slug)
  }
  changed.push(...before.keys())
  return changed.sort()
}
