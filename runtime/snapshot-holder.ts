/**
 * The snapshot currently served. Requests read `current` once and keep that
 * object for their whole life; `reload` replaces it in one assignment after the
 * new snapshot has loaded and verified completely.
 */
import { loadSnapshot, resolveCurrentSnapshot, type FileCache, type LoadedSnapshot } from './snapshot.ts'

/** Longer than any request may take (the request timeout's default is 30 s). */
const RELEASE_AFTER_MS = 120_000

export class SnapshotHolder {
  constructor(
    public current: LoadedSnapshot,
    private readonly distDir: string,
    private readonly fileCache: FileCache,
  ) {}

  static async open(distDir: string, fileCache: FileCache): Promise<SnapshotHolder> {
    const dir = await resolveCurrentSnapshot(distDir)
    return new SnapshotHolder(await loadSnapshot(dir, fileCache), distDir, fileCache)
  }

  /**
   * Loads whatever `current` now points at and switches to it. A snapshot
   * that fails to load is refused and the old one keeps serving.
   */
  async reload(): Promise<{ changed: boolean; id: string }> {
    const dir = await resolveCurrentSnapshot(this.distDir)
    if (dir === this.current.dir) return { changed: false, id: this.current.id }
    const next = await loadSnapshot(dir, this.fileCache)
    // Requests that took the previous snapshot may still read from it; none outlives this grace.
    // Only its close function waits, so its memory goes as soon as those requests do.
    const releasePrevious = this.current.close
    this.current = next
    setTimeout(releasePrevious, RELEASE_AFTER_MS).unref()
    return { changed: true, id: next.id }
  }
}
