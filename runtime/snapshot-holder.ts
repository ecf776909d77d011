/**
 * The snapshot currently served. Requests read `current` once and keep that
 * object for their whole life; `swap` replaces it in one assignment after the
 * new snapshot has loaded and verified completely.
 */
import { loadSnapshot, resolveCurrentSnapshot, type FileCache, type LoadedSnapshot } from './snapshot.ts'

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
    this.current = next
    return { changed: true, id: next.id }
  }
}
