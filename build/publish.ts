/**
 * Atomic publishing. A build writes into a private staging folder; only a
 * complete snapshot is renamed into `snapshots/<id>` and then `current` is
 * swapped to it with one rename of a symlink. A build that dies at any point
 * leaves `current` on the previous snapshot; its staging folder is swept by
 * the next build.
 */
import { spawn } from 'node:child_process'
import { mkdir, open, readdir, readFile, rename, rm, stat, symlink, writeFile } from 'node:fs/promises'
import path from 'node:path'
import lockfile from 'proper-lockfile'
import {
  CURRENT_LINK,
  PRUNED_SNAPSHOTS_FILE,
  publishedSnapshotId,
  readPrunedSnapshots,
  readSnapshotIdList,
  SNAPSHOT_FORMAT,
  SNAPSHOTS_DIR,
  snapshotPaths,
} from '../core/snapshot.ts'
import { jobLayerBase } from '../core/job-layers.ts'
import { bodiesBaseId } from '../core/packed-bodies.ts'

const STAGING_PREFIX = '.staging-'

/** The lock: a folder proper-lockfile makes and keeps fresh while a build or rollback changes the dist folder. */
const LOCK = '.publish.lock'
/** Who holds the lock, for the message another publisher gets. */
const LOCK_HOLDER = '.publish.lock-holder'
/** A lock its process stopped refreshing for this long (killed, machine stopped) is taken over. */
const STALE_LOCK_MS = 60_000

/**
 * Takes the dist folder's publish lock; resolves with its release. Two
 * builds publishing into one folder at once race: the later to finish wins
 * whichever was newer, its change list is against the wrong snapshot, and
 * one can delete a snapshot the other just published. proper-lockfile makes
 * the lock with one mkdir (atomic) and refreshes its mtime while it is
 * held, so a lock is stale by age, not by a pid that a restarted container
 * may well reuse. `create` makes the dist folder first (a build); without
 * it, a missing folder is an error (a rollback of a misspelt folder).
 */
export async function acquirePublishLock(
  distDir: string,
  what: 'build' | 'rollback',
  create: boolean,
): Promise<() => Promise<void>> {
  if (create) await mkdir(distDir, { recursive: true })
  else if (
    !(await stat(distDir).then(
      (found) => found.isDirectory(),
      () => false,
    ))
  )
    throw new Error(`no such dist folder: ${distDir}`)
  const lockPath = path.join(distDir, LOCK)
  const holderPath = path.join(distDir, LOCK_HOLDER)
  const take = () =>
    lockfile.lock(distDir, {
      lockfilePath: lockPath,
      realpath: false,
      stale: STALE_LOCK_MS,
      retries: 0,
      // A lock not refreshed in time (the event loop blocked for a minute) is said, not thrown from a timer.
      onCompromised: (error) => process.emitWarning(`publish lock of ${distDir} lost: ${error.message}`),
    })
  let release: () => Promise<void>
  try {
    release = await take()
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ELOCKED') throw error
    const holder = await holderLine(holderPath)
    if (!holderGone(holder, lockPath))
      throw new Error(
        `another ${holder || 'build or rollback'} is publishing into ${distDir}; wait for it to finish (a lock nothing refreshes is taken over after ${STALE_LOCK_MS / 1000} s)`,
      )
    // Its holder was killed (the next build should not wait out the minute): the lock goes, and is taken anew
    // with the same one mkdir, so of two builds arriving at once only one gets it.
    await rm(lockPath, { recursive: true, force: true })
    release = await take()
  }
  heldLocks.add(lockPath)
  await writeFile(holderPath, `${what} (pid ${process.pid}, since ${new Date().toISOString()})\n`)
  return async () => {
    heldLocks.delete(lockPath)
    await rm(holderPath, { force: true })
    await release()
  }
}

/**
 * The lock holder's line; its holder writes it just after taking the lock,
 * so a lock found without one is given a moment (up to ~200 ms) before it
 * is taken as unnamed.
 */
async function holderLine(holderPath: string): Promise<string> {
  for (let attempt = 0; ; attempt++) {
    const line = (await readFile(holderPath, 'utf8').catch(() => '')).trim()
    if (line !== '' || attempt === 4) return line
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/** Locks this process holds: a holder file naming this pid is another incarnation's only when not among them. */
const heldLocks = new Set<string>()

/**
 * Whether the process a holder line names is gone: its pid is not running,
 * or is this process's without this process holding the lock (a restarted
 * container reuses pids). A pid that is running is taken as the holder, so
 * a reused pid only makes the lock wait out its staleness; an unreadable
 * line (the holder died before writing it) likewise.
 */
function holderGone(holder: string, lockPath: string): boolean {
  const pid = Number(/\(pid (\d+),/.exec(holder)?.[1])
  if (!Number.isSafeInteger(pid) || pid <= 0) return false
  if (pid === process.pid) return !heldLocks.has(lockPath)
  try {
    process.kill(pid, 0)
    return false
  } catch (error) {
    // EPERM: running, as another user.
    return (error as NodeJS.ErrnoException).code === 'ESRCH'
  }
}

export async function createStagingDir(distDir: string, snapshotId: string): Promise<string> {
  const snapshotsDir = path.join(distDir, SNAPSHOTS_DIR)
  await mkdir(snapshotsDir, { recursive: true })
  const staging = path.join(snapshotsDir, `${STAGING_PREFIX}${snapshotId}-${process.pid}`)
  await rm(staging, { recursive: true, force: true })
  await mkdir(staging, { recursive: true })
  return staging
}

/**
 * `id`, or `id-02`, `id-03`, ... when a snapshot folder of that name already
 * exists (a rebuild with the same reference time and public files): a
 * published folder is never deleted and replaced in place, which would leave
 * `current` dangling for a moment and leave running servers on stale indexes.
 */
export async function unusedSnapshotId(distDir: string, id: string): Promise<string> {
  const existing = new Set(await readdir(path.join(distDir, SNAPSHOTS_DIR)).catch(() => [] as string[]))
  let candidate = id
  for (let n = 2; existing.has(candidate); n++) candidate = `${id}-${String(n).padStart(2, '0')}`
  return candidate
}

/** Renames the finished staging folder into place, swaps `current` to it and records the publish. */
export async function publishSnapshot(distDir: string, stagingDir: string, snapshotId: string): Promise<string> {
  const snapshotsDir = path.join(distDir, SNAPSHOTS_DIR)
  const finalDir = path.join(snapshotsDir, snapshotId)
  await rm(finalDir, { recursive: true, force: true })
  await rename(stagingDir, finalDir)
  // Recorded before the swap: a failure here publishes nothing, and one after it leaves a history that names
  // the new snapshot last, which rollback and pruning read correctly either way.
  await writeHistory(distDir, await historyWith(distDir, snapshotId))
  await pointCurrentAt(distDir, snapshotId)
  return finalDir
}

/**
 * The history with `id` published next. A folder without one (published
 * before it was kept) is seeded with its snapshots up to the current one, in
 * id order, so that a rollback still has somewhere to go; a current snapshot
 * the history does not end with (a crash between writing it and the swap, a
 * hand-made symlink) is recorded before `id`.
 */
async function historyWith(distDir: string, id: string): Promise<string[]> {
  const current = await publishedSnapshotId(distDir)
  const history =
    (await readHistory(distDir)) ??
    (await listSnapshots(distDir)).filter((name) => name !== id && current !== undefined && name <= current)
  if (current !== undefined && current !== id && history.at(-1) !== current) history.push(current)
  return [...history, id]
}

/**
 * Snapshot ids in the order they were published, one a line, beside
 * `current`. Rollback and pruning go by it, not by id: an id starts with the
 * build's reference time (`--now` can set it in the past), and a build killed
 * between its rename and the swap leaves a snapshot that was never served.
 */
const HISTORY_FILE = 'publish-history.txt'
/** Publishes remembered; older lines are dropped (every kept snapshot is among far fewer). */
const HISTORY_LENGTH = 1000

function readHistory(distDir: string): Promise<string[] | undefined> {
  return readSnapshotIdList(distDir, HISTORY_FILE)
}

function writeHistory(distDir: string, ids: string[]): Promise<void> {
  return writeSnapshotIdList(distDir, HISTORY_FILE, ids.slice(-HISTORY_LENGTH))
}

/** Replaces a list of ids beside `current` in one rename, so a reader never sees half of it. */
async function writeSnapshotIdList(distDir: string, file: string, ids: string[]): Promise<void> {
  const temp = path.join(distDir, `.${file}-${process.pid}`)
  try {
    await writeFile(temp, ids.map((id) => `${id}\n`).join(''))
    await rename(temp, path.join(distDir, file))
  } finally {
    await rm(temp, { force: true })
  }
}

/**
 * The snapshots on disk, oldest publish first: those the history does not
 * name (published before it was kept, or never published) by id, then the
 * history's, each at its last publish.
 */
async function inPublishOrder(distDir: string): Promise<string[]> {
  const onDisk = await listSnapshots(distDir)
  const history = (await readHistory(distDir)) ?? []
  const lastPublish = new Map(history.map((id, at) => [id, at]))
  const unnamed = onDisk.filter((id) => !lastPublish.has(id))
  const named = onDisk.filter((id) => lastPublish.has(id)).sort((a, b) => lastPublish.get(a)! - lastPublish.get(b)!)
  return [...unnamed, ...named]
}

/** Swaps `current` with one rename(2): readers see the old or the new target, never neither. */
export async function pointCurrentAt(distDir: string, snapshotId: string): Promise<void> {
  const tempLink = path.join(distDir, `.${CURRENT_LINK}-${process.pid}-${Date.now()}`)
  await symlink(path.join(SNAPSHOTS_DIR, snapshotId), tempLink)
  await rename(tempLink, path.join(distDir, CURRENT_LINK))
}

/** Snapshot ids on disk, oldest first (ids start with their build time). */
export async function listSnapshots(distDir: string): Promise<string[]> {
  try {
    const entries = await readdir(path.join(distDir, SNAPSHOTS_DIR), { withFileTypes: true })
    return entries
      .filter((e) => e.isDirectory() && !e.name.startsWith('.'))
      .map((e) => e.name)
      .sort()
  } catch {
    return []
  }
}

/**
 * Removes staging folders of dead builds and all but the newest `keep`
 * snapshots (never the current one, nor the base whose job files a kept
 * snapshot's delta looks through: core/job-layers.ts). Each is first renamed out
 * of the snapshot list (one rename: from then on it is gone to every
 * reader), then deleted by the system's `rm -rf` in the background: deleting
 * a snapshot's ~100k job files took ~0.6 s of every rebuild at 100k jobs
 * (and ~10x that at 1M) that nothing had to wait for. A deletion cut short
 * (the machine stopped) is finished by the next build.
 */
export async function pruneSnapshots(distDir: string, keep: number): Promise<string[]> {
  const snapshotsDir = path.join(distDir, SNAPSHOTS_DIR)
  const current = await publishedSnapshotId(distDir)
  const entries = await readdir(snapshotsDir, { withFileTypes: true }).catch(() => [])
  const discard = async (name: string) => {
    const trash = path.join(snapshotsDir, `${TRASH_PREFIX}${name}-${process.pid}`)
    await rename(path.join(snapshotsDir, name), trash)
    await removeTree(trash)
  }
  for (const entry of entries) {
    if (entry.name.startsWith(STAGING_PREFIX)) {
      const pid = Number(entry.name.split('-').at(-1))
      if (!isAlive(pid)) await discard(entry.name)
    } else if (entry.name.startsWith(TRASH_PREFIX)) {
      await removeTree(path.join(snapshotsDir, entry.name))
    }
  }
  const snapshots = await inPublishOrder(distDir)
  const candidates = snapshots.slice(0, Math.max(0, snapshots.length - keep)).filter((id) => id !== current)
  // A kept snapshot whose job files are a delta needs its base's (core/job-layers.ts), one whose packed bodies
  // are layered its base's whole bodies files (core/packed-bodies.ts); a base is never itself a delta.
  const kept = snapshots.filter((id) => !candidates.includes(id))
  const bases = new Set<string | undefined>()
  for (const id of kept) {
    const dir = path.join(snapshotsDir, id)
    bases.add(await jobLayerBase(dir))
    for (const paths of [snapshotPaths.v2Bodies, snapshotPaths.v1Bodies]) bases.add(bodiesBaseId(dir, paths))
  }
  const removed = candidates.filter((id) => !bases.has(id))
  if (removed.length) await recordPruned(distDir, removed)
  for (const id of removed) await discard(id)
  return removed
}

/** Pruned ids remembered for the change feed's 410; older lines are dropped. */
const PRUNED_LENGTH = 1000

/** Adds `ids` to the pruned list (core/snapshot.ts PRUNED_SNAPSHOTS_FILE), before they go. */
async function recordPruned(distDir: string, ids: string[]): Promise<void> {
  const known = await readPrunedSnapshots(distDir)
  const list = [...known.filter((id) => !ids.includes(id)), ...ids]
  await writeSnapshotIdList(distDir, PRUNED_SNAPSHOTS_FILE, list.slice(-PRUNED_LENGTH))
}

/** Pruned snapshots being deleted in the background. */
const TRASH_PREFIX = '.pruned-'

/**
 * Deletes a folder that no reader can reach any more (a dead build's
 * staging folder, a pruned snapshot). A snapshot holds a file per job:
 * Node's recursive rm walks it in JavaScript (an lstat and a promise per
 * file, ~18 s of the build's own thread at 1M jobs), so the system's
 * `rm -rf` does it, in the background, where there is one; Node's rm where
 * there is not.
 */
async function removeTree(dir: string): Promise<void> {
  const started = await new Promise<boolean>((resolve) => {
    const child = spawn('rm', ['-rf', '--', dir], { stdio: 'ignore', detached: true })
    child.on('error', () => resolve(false))
    child.on('spawn', () => {
      child.unref()
      resolve(true)
    })
  })
  if (!started) await rm(dir, { recursive: true, force: true })
}

function isAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) return false
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/**
 * Republishes the snapshot published before the current one (`jobsnap
 * rollback`); called again, the one before that. Returns the ids, or throws
 * when there is nothing older to go back to.
 */
export async function rollbackSnapshot(distDir: string): Promise<{ from: string | undefined; to: string }> {
  const release = await acquirePublishLock(distDir, 'rollback', false)
  try {
    return await rollbackLocked(distDir)
  } finally {
    await release()
  }
}

/**
 * A snapshot built by an older version (another SNAPSHOT_FORMAT) is one no server of this version loads:
 * rolling back to it would take the API down, so rollback refuses and says to build instead. The format
 * is read from the manifest's first bytes (the file map after it is a million entries at 1M jobs).
 */
async function refuseOtherFormat(distDir: string, id: string): Promise<void> {
  const manifest = await open(path.join(distDir, SNAPSHOTS_DIR, id, snapshotPaths.manifest), 'r')
  try {
    const { buffer, bytesRead } = await manifest.read({ buffer: Buffer.alloc(4096), position: 0 })
    const format = Number(/"format"\s*:\s*(\d+)/.exec(buffer.toString('utf8', 0, bytesRead))?.[1])
    if (format !== SNAPSHOT_FORMAT)
      throw new Error(
        `snapshot ${id} is format ${Number.isNaN(format) ? '(unknown)' : format}, which this version does not serve (format ${SNAPSHOT_FORMAT}); build the data again instead of rolling back`,
      )
  } finally {
    await manifest.close()
  }
}

async function rollbackLocked(distDir: string): Promise<{ from: string | undefined; to: string }> {
  const current = await publishedSnapshotId(distDir)
  const history = await readHistory(distDir)
  if (!history) {
    // A folder published before the history was kept: ids are build times, the best order there is.
    const target = (await listSnapshots(distDir)).filter((id) => current === undefined || id < current).at(-1)
    if (!target) throw new Error(`no snapshot older than ${current ?? '(none)'} in ${distDir}/${SNAPSHOTS_DIR}`)
    await refuseOtherFormat(distDir, target)
    await pointCurrentAt(distDir, target)
    return { from: current, to: target }
  }
  // The publish before the current one's, still on disk; the current one's publish is taken back, so a second
  // rollback goes one further.
  const onDisk = new Set(await listSnapshots(distDir))
  const at = current === undefined ? -1 : history.lastIndexOf(current)
  const before = at < 0 ? history : history.slice(0, at)
  const target = before.findLast((id) => id !== current && onDisk.has(id))
  if (!target)
    throw new Error(`no snapshot published before ${current ?? '(none)'} left in ${distDir}/${SNAPSHOTS_DIR}`)
  await refuseOtherFormat(distDir, target)
  await pointCurrentAt(distDir, target)
  await writeHistory(distDir, before.slice(0, before.lastIndexOf(target) + 1))
  return { from: current, to: target }
}
