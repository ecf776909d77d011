/**
 * The snapshots kept beside the live one, and the change link each holds
 * (index/changes.json, written by the build): what the change feed composes.
 * Links never change once written, so each is read from disk once.
 */
import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import { LRUCache } from 'lru-cache'
import { SNAPSHOT_ID_PATTERN, SnapshotJobChanges, snapshotPaths } from '../../core/snapshot.ts'
import type { ChangeLink } from '../query/changes.ts'

/** Links remembered; far more than the snapshots a deployment keeps. */
const LINKS_KEPT = 256

const links = new LRUCache<string, ChangeLink>({ max: LINKS_KEPT })

async function readLink(snapshotsDir: string, id: string): Promise<ChangeLink | undefined> {
  const key = path.join(snapshotsDir, id)
  const known = links.get(key)
  if (known) return known
  let link: ChangeLink | undefined
  try {
    const parsed = SnapshotJobChanges.safeParse(
      JSON.parse(await readFile(path.join(key, snapshotPaths.changes), 'utf8')),
    )
    link = parsed.success ? parsed.data : undefined
  } catch {
    link = undefined
  }
  // A missing link is not remembered: the snapshot may be mid-publish.
  if (link) links.set(key, link)
  return link
}

/** Every kept snapshot's link, by id, for the snapshots folder the live snapshot sits in. */
export async function keptLinks(liveSnapshotDir: string): Promise<Map<string, ChangeLink>> {
  const snapshotsDir = path.dirname(liveSnapshotDir)
  const ids = (await readdir(snapshotsDir).catch(() => [] as string[])).filter((name) => SNAPSHOT_ID_PATTERN.test(name))
  const out = new Map<string, ChangeLink>()
  for (const id of ids) {
    const link = await readLink(snapshotsDir, id)
    if (link) out.set(id, link)
  }
  return out
}
