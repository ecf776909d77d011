/**
 * `jobsnap serve`: serve, reload on SIGHUP, drain on SIGTERM. With `--workers N` (N > 1) this process
 * becomes the cluster's primary (runtime/cluster.ts) and each forked worker
 * runs the server below.
 */
import cluster from 'node:cluster'
import type { Config } from '../core/config.ts'
import { runPrimary, type WorkerReady } from './cluster.ts'
import { PrimaryLimitClient } from './http/primary-limiter.ts'
import { startServer, type Logger } from './server.ts'

function createLogger(config: Config): Logger {
  const format = config.JOBSNAP_LOG ?? (process.stdout.isTTY ? 'pretty' : 'json')
  if (format === 'silent') return () => {}
  const worker = cluster.isWorker ? { worker: process.pid } : undefined
  if (format === 'json')
    return (message, fields) =>
      console.log(JSON.stringify({ time: new Date().toISOString(), message, ...worker, ...fields }))
  return (message, fields) => {
    const all = { ...worker, ...fields }
    const pairs = Object.entries(all).map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
    console.log(`${message}${pairs.length ? ` ${pairs.join(' ')}` : ''}`)
  }
}

export async function runServeCommand(config: Config): Promise<void> {
  const log = createLogger(config)
  const clustered = config.JOBSNAP_WORKERS > 1
  if (clustered && cluster.isPrimary) return runPrimary(config, log)

  const primaryLimits =
    cluster.isWorker && !config.JOBSNAP_REDIS_URL
      ? new PrimaryLimitClient(
          { send: (message) => process.send!(message), on: (event, listener) => process.on(event, listener) },
          log,
        )
      : undefined
  const server = await startServer({ config, log, primaryLimits })
  const snapshot = server.snapshots.current
  if (cluster.isWorker) {
    const ready: WorkerReady = {
      type: 'jobsnap:ready',
      url: server.url,
      snapshot_id: snapshot.id,
      ready_ms: Math.round(performance.now()),
      rss_mb: Math.round(process.memoryUsage.rss() / 2 ** 20),
    }
    process.send?.(ready)
  } else
    log(`jobsnap listening on ${server.url}`, {
      snapshot_id: snapshot.id,
      live_jobs: snapshot.jobs.size,
      docs: `${server.url}/docs`,
    })
  process.on('SIGHUP', () => void server.reload())
  const stop = (signal: string) => {
    log('shutting down', { signal })
    void server.close().then(() => process.exit(0))
  }
  process.once('SIGTERM', () => stop('SIGTERM'))
  // A worker leaves Ctrl-C to its primary, which sends SIGTERM to every worker.
  process.once('SIGINT', () => (cluster.isWorker ? undefined : stop('SIGINT')))
}
