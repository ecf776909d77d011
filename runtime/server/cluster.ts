/**
 * `jobsnap serve --workers N`: the primary process of a node:cluster. It
 * serves no request itself; it forks N workers that share the listening port
 * (the primary hands out connections round-robin), holds the one pair of
 * rate limiters they all ask (unless Redis holds them), forwards SIGHUP and
 * SIGTERM, replaces a worker that dies, and reports each worker's ready time
 * and RSS, and their total.
 *
 * Each worker is a whole server: it loads the snapshot itself, follows
 * `dist/current` itself (so a hot swap reaches every worker) and drains on
 * SIGTERM like a single process does. The primary only orders their hot
 * swaps, one worker loading at a time (reload-turns.ts).
 */
import cluster, { type Worker } from 'node:cluster'
import type { Config } from '../../core/config.ts'
import { answerLimitAsks } from '../http/primary-limiter.ts'
import { limitersFor } from '../http/rate-limit.ts'
import { metricsAnswerer } from '../ops/cluster-metrics.ts'
import { ReloadTurns } from './reload-turns.ts'
import type { Logs } from '../ops/log.ts'

/** Worker -> primary, once its server listens. */
export interface WorkerReady {
  type: 'jobsnap:ready'
  url: string
  snapshot_id: string
  /** Process start to listening, milliseconds. */
  ready_ms: number
  rss_mb: number
}

function isWorkerReady(message: unknown): message is WorkerReady {
  return typeof message === 'object' && message !== null && (message as WorkerReady).type === 'jobsnap:ready'
}

/** Runs the primary until SIGTERM/SIGINT has drained every worker; then the process exits 0. */
export function runPrimary(config: Config, logs: Logs): void {
  const { log } = logs
  const answerMetrics = config.JOBSNAP_METRICS ? metricsAnswerer() : undefined
  const count = config.JOBSNAP_WORKERS
  // With Redis every worker counts there (as replicas on other machines do); otherwise here, once. Made once the
  // workers are forked (their starting is what /ready waits for; no worker asks before it has loaded a snapshot).
  let limiters: ReturnType<typeof limitersFor> | undefined
  const ready = new Map<number, WorkerReady>()
  let stopping = false
  let failed = false
  let announced = false
  const turns = new ReloadTurns((id) => {
    const worker = cluster.workers?.[id]
    if (worker?.isConnected()) worker.send({ type: 'jobsnap:reload-turn', granted: true })
    else turns.leave(id)
  }, log)

  const fork = (): Worker => {
    const worker = cluster.fork()
    worker.on('message', (message: unknown) => {
      if (limiters && answerLimitAsks(limiters, message, (answer) => worker.send(answer))) return
      if (answerMetrics?.(message, (answer) => worker.isConnected() && worker.send(answer))) return
      if (turns.answer(worker.id, message)) return
      if (isWorkerReady(message)) {
        ready.set(worker.id, message)
        log('worker ready', {
          pid: worker.process.pid,
          ready_ms: message.ready_ms,
          rss_mb: message.rss_mb,
          snapshot_id: message.snapshot_id,
        })
        if (!announced && ready.size === count) {
          announced = true
          const all = [...ready.values()]
          log(`jobsnap listening on ${message.url}`, {
            workers: count,
            limits: limiters ? 'held by the primary' : 'in redis',
            ready_ms_max: Math.max(...all.map((w) => w.ready_ms)),
            rss_mb_total: Math.round(all.reduce((sum, w) => sum + w.rss_mb, 0) + process.memoryUsage.rss() / 2 ** 20),
          })
        }
      }
    })
    return worker
  }

  const toWorkers = (signal: NodeJS.Signals) => {
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill(signal)
  }

  cluster.on('exit', (worker, code, signal) => {
    const wasReady = ready.delete(worker.id)
    turns.leave(worker.id)
    if (stopping) {
      if (Object.keys(cluster.workers ?? {}).length === 0) {
        logs.flush()
        process.exit(failed ? 1 : 0)
      }
      return
    }
    if (!wasReady) {
      // A worker that never came up (bad snapshot, port taken) would fail again: stop instead of looping.
      log('a worker failed to start; stopping', { pid: worker.process.pid, code, signal })
      stopping = true
      failed = true
      toWorkers('SIGTERM')
      if (Object.keys(cluster.workers ?? {}).length === 0) {
        logs.flush()
        process.exit(1)
      }
      return
    }
    log('worker exited; starting another', { pid: worker.process.pid, code, signal })
    fork()
  })

  for (let i = 0; i < count; i++) fork()
  limiters = config.JOBSNAP_REDIS_URL ? undefined : limitersFor(config)

  process.on('SIGHUP', () => toWorkers('SIGHUP'))
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return
    stopping = true
    log('shutting down', { signal, workers: count })
    toWorkers('SIGTERM')
  }
  process.on('SIGTERM', () => stop('SIGTERM'))
  process.on('SIGINT', () => stop('SIGINT'))
}
