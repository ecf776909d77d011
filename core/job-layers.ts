/**
 * The per-job files of a snapshot (`v2/jobs/<slug>.json`, read by a front
 * such as nginx, never by the servers) come in layers, so that a rebuild
 * where 1% of jobs changed does not hard-link the other 99% one by one (at
 * 1M jobs, ~15 s of kernel time a build). A snapshot's `v2/jobs/` is either
 * a full layer (every live job's file) or a delta over a base snapshot's full
 * layer: only the files of jobs new or changed since that base, with
 *   - `v2/base`, a relative symlink to the base's `v2/jobs` folder
 *     (`../../<base-id>/v2/jobs`), where every other live job's file is;
 *   - `v2/gone/<slug>`, an empty file (a whiteout) for each job the base has
 *     and this snapshot does not publish.
 * A job's file is then `v2/jobs/<slug>.json` when there, else gone when its
 * whiteout is there, else `v2/base/<slug>.json`: two lookups at most, since a
 * base is always a full layer. The manifest's file map still names every
 * live job's file with its hash, whichever layer holds it.
 */
import { existsSync, readdirSync } from 'node:fs'
import { readlink } from 'node:fs/promises'
import path from 'node:path'

/** A delta's link to its base's job files. */
export const JOB_BASE_LINK = 'v2/base'
/** A delta's whiteouts: an empty file per job its base has and it does not. */
export const JOB_WHITEOUTS = 'v2/gone'
/** Where a snapshot's own job files are. */
export const JOB_FILES_DIR = 'v2/jobs'
/**
 * A delta's list of the job files it holds itself, one relative path a line, as its build put them there: the
 * next build goes by it, not by what the folder holds now, so a file deleted by hand is made again, not
 * taken to be the base's.
 */
export const JOB_DELTA_LIST = 'index/job-delta.txt'
/**
 * A delta's record of what its base holds under the jobs it overrides (its own files and its whiteouts):
 * `<slug>\t<content hash>` a line for each the base has a file for. The next build tells a job changed back
 * to the base's bytes by hash instead of reading the base's file (at 1M jobs, a rebuild that undid the last
 * one's 1% read ~24,000 cold files, ~20 s). Absent from a delta made before it was written: then the build
 * reads those files as it did.
 */
export const JOB_BASE_HASHES = 'index/job-base-hashes.txt'

/** The `v2/base` link's target for a base snapshot id (relative to `v2/`, so a copied or moved dist folder keeps it). */
export const jobBaseTarget = (baseId: string): string => `../../${baseId}/${JOB_FILES_DIR}`

/** The id of the snapshot whose full layer a snapshot's job files are a delta over; undefined for a full layer. */
export async function jobLayerBase(snapshotDir: string): Promise<string | undefined> {
  try {
    const target = await readlink(path.join(snapshotDir, JOB_BASE_LINK))
    const id = /^\.\.\/\.\.\/([^/]+)\/v2\/jobs\/?$/.exec(target)?.[1]
    return id
  } catch {
    return undefined
  }
}

/**
 * Where a job's file (`v2/jobs/<slug>.json`, as snapshotPaths.v2Job names it) of a snapshot is on disk,
 * looking through its layers as a front does; undefined when the snapshot does not publish it. (For tools
 * and tests: the servers never read job files.)
 */
export function jobFileOnDisk(snapshotDir: string, relativePath: string): string | undefined {
  const own = path.join(snapshotDir, relativePath)
  if (existsSync(own)) return own
  const slug = path.basename(relativePath, '.json')
  if (existsSync(path.join(snapshotDir, JOB_WHITEOUTS, slug))) return undefined
  const base = path.join(snapshotDir, JOB_BASE_LINK, `${slug}.json`)
  return existsSync(base) ? base : undefined
}

/**
 * Every job file a snapshot publishes, slug -> where it is on disk, found as a front finds them: its own
 * `v2/jobs/`, then its base's (`v2/base`) but for the whited out. (For tools and tests.)
 */
export function jobFilesThroughLayers(snapshotDir: string): Map<string, string> {
  const out = new Map<string, string>()
  const slugsIn = (folder: string) => {
    try {
      return readdirSync(path.join(snapshotDir, folder)).map((name) => name.replace(/\.json$/, ''))
    } catch {
      return []
    }
  }
  for (const slug of slugsIn(JOB_FILES_DIR)) out.set(slug, path.join(snapshotDir, JOB_FILES_DIR, `${slug}.json`))
  const gone = new Set(slugsIn(JOB_WHITEOUTS))
  for (const slug of slugsIn(JOB_BASE_LINK))
    if (!out.has(slug) && !gone.has(slug)) out.set(slug, path.join(snapshotDir, JOB_BASE_LINK, `${slug}.json`))
  return out
}
