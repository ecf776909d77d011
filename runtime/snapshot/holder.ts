/**
 * The snapshot currently served. Requests read `current` once and keep that
 * object for their whole life; `reload` replaces it in one assignment after the
 * new snapshot has loaded and verified completely.
 *
 * The server listens before the first snapshot has loaded (at a million jobs
 * that takes seconds), so /health and /ready can answer: until then,
 * anything that reads `current` answers 503 with Retry-After.
 */
import cluster from 'node:cluster'
import { lstat } from 'node:fs/promises'
import path from 'node:path'
import { CURRENT_LINK } from '../../core/snapshot.ts'
import { collectGarbage, collectGarbageAfterMarking, followMarking } from '../ops/collect-garbage.ts'
import { httpError } from '../http/errors.ts'
import { loadSnapshot, resolveCurrentSnapshot, type FileCache, type LoadedSnapshot } from './load.ts'

/** Longer than any request may take (the request timeout's default is 30 s). */
const RELEASE_AFTER_MS = 120_000
/**
 * Long enough for the requests that took the previous snapshot just before a
 * swap (milliseconds each) to finish; each worker of a cluster a little later
 * than the one before, so they do not pause at once.
 */
const COLLECT_AFTER_MS = 2_000 + (cluster.worker?.id ?? 0) * 300
/** How long that collection waits at most for an incremental marking V8 has under way to end (collectGarbageAfterMarking). */
const COLLECT_WAIT_MS = 3_000

export class SnapshotHolder {
  private served: LoadedSnapshot | undefined

  /** `bodiesInMemoryBytes`, `hotBodiesBytes`: see loadSnapshot. */
  constructor(
    private readonly distDir: string,
    private readonly fileCache: FileCache,
    private readonly bodiesInMemoryBytes?: number,
    private readonly hotBodiesBytes?: number,
  ) {
    followMarking()
  }

  /** A holder with `current` already loaded. */
  static async open(distDir: string, fileCache: FileCache, bodiesInMemoryBytes?: number): Promise<SnapshotHolder> {
    const holder = new SnapshotHolder(distDir, fileCache, bodiesInMemoryBytes)
    await holder.reload()
    return holder
  }

  /** Whether the first snapshot has loaded. */
  get loaded(): boolean {
    return this.served !== undefined
  }

  /** The snapshot to answer from; throws a 503 HTTP error while the first one is still loading. */
  get current(): LoadedSnapshot {
    if (this.served) return this.served
    throw httpError(503, 'The server is starting: its first snapshot is still loading. Retry in a few seconds.', {
      headers: [['retry-after', '2']],
    })
  }

  /**
   * Loads whatever `current` now points at and switches to it. A snapshot
   * that fails to load is refused and the old one keeps serving.
   *
   * `current` is read again once the load is done: if it was republished
   * meanwhile (a quick rollback, two publishes in a row), the loaded snapshot
   * is dropped unseen and the newer one loaded, so no request is ever answered
   * from a snapshot `current` had already stopped naming.
   */
  async reload(): Promise<{ changed: boolean; id: string }> {
    let dir = await resolveCurrentSnapshot(this.distDir)
    for (;;) {
      const previous = this.served
      if (dir === previous?.dir) return { changed: false, id: previous.id }
      const next = await loadSnapshot(dir, this.fileCache, this.bodiesInMemoryBytes, previous, this.hotBodiesBytes)
      const named = await resolveCurrentSnapshot(this.distDir)
      if (named !== dir) {
        next.close()
        dir = named
        continue
      }
      // The link's own time: when this snapshot became the published one (a rollback included).
      next.publishedAt = await lstat(path.join(this.distDir, CURRENT_LINK)).then(
        (link) => link.mtimeMs,
        () => undefined,
      )
      // The first load's scratch (whole index files read, at 1M jobs hundreds of MB outside the JS heap) goes back
      // before the server says it is ready, rather than at a full collection V8 may not run for minutes; no
      // request is waiting on this snapshot yet. A swap's scratch goes with the previous snapshot, below.
      if (!previous) collectGarbage()
      this.served = next
      // Requests that took the previous snapshot may still read from it; none outlives this grace.
      // Only its close function waits, so its memory goes as soon as those requests do.
      if (previous) {
        setTimeout(previous.close, RELEASE_AFTER_MS).unref()
        // The previous snapshot's memory goes back now rather than at V8's next full collection (ops/collect-garbage.ts).
        setTimeout(() => collectGarbageAfterMarking(COLLECT_WAIT_MS), COLLECT_AFTER_MS).unref()
      }
      return { changed: true, id: next.id }
    }
  }
}
