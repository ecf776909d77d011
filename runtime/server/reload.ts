/**
 * Hot swap: reloading the snapshot `<dist>/current` names, one reload at a
 * time, and following that link so a publish is picked up without a signal.
 * A snapshot that fails to load is refused and the previous one kept.
 */
import { type FSWatcher, watch } from 'node:fs'
import { CURRENT_LINK } from '../../core/snapshot.ts'
import type { ResponseCache } from '../http/response-cache.ts'
import type { Logger } from '../ops/log.ts'
import type { Metrics } from '../ops/metrics.ts'
import type { SnapshotHolder } from '../snapshot/holder.ts'

/** A reload of `current` that clears the response cache on a change and logs, counts and survives a refusal. */
export function snapshotReloader(
  snapshots: SnapshotHolder,
  responseCache: ResponseCache,
  metrics: Metrics | undefined,
  log: Logger,
  /** In a cluster: waits for this worker's turn to load (reload-turns.ts), resolving with its hand-back. */
  takeTurn?: () => Promise<() => void>,
): () => Promise<void> {
  const reloadOnce = async () => {
    const asked = performance.now()
    const handBack = await takeTurn?.()
    const waited = takeTurn ? { turn_wait_ms: Math.round(performance.now() - asked) } : {}
    await loadAndSwitch(waited).finally(handBack)
  }
  const loadAndSwitch = (waited: { turn_wait_ms?: number }) => {
    const started = performance.now()
    return snapshots.reload().then(
      (result) => {
        if (result.changed) {
          responseCache.clear()
          metrics?.snapshotLoaded(true)
          log('snapshot loaded', {
            snapshot_id: result.id,
            load_ms: Math.round(performance.now() - started),
            ...waited,
          })
        }
      },
      (error: Error) => {
        metrics?.snapshotLoaded(false)
        log(
          'snapshot refused; still serving the previous one',
          { snapshot_id: snapshots.current.id, error: error.message },
          'warn',
        )
      },
    )
  }
  // One reload at a time; a change that arrives while one runs (it may have read `current` before
  // the change) is not dropped: the reload runs again, so the server ends on what `current` names last.
  let reloading: Promise<void> | undefined
  let changedMeanwhile = false
  return (): Promise<void> => {
    if (reloading) {
      changedMeanwhile = true
      return reloading
    }
    reloading = (async () => {
      do {
        changedMeanwhile = false
        await reloadOnce()
      } while (changedMeanwhile)
    })().finally(() => {
      reloading = undefined
    })
    return reloading
  }
}

/** Reloads whenever the `current` link in `dist` changes (a publish or a rollback). */
export function watchCurrent(dist: string, reload: () => Promise<void>): FSWatcher {
  return watch(dist, (_event, file) => {
    if (file === CURRENT_LINK) void reload()
  })
}
