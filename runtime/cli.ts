/**
 * `jobsnap serve`: serve, reload on SIGHUP, drain on SIGTERM. With `--workers N` (N > 1) this process
 * becomes the cluster's primary (runtime/server/cluster.ts) and each forked worker
 * runs the server below.
 */
import cluster from 'node:cluster'
import { setTimeout } from 'node:timers/promises'
import type { Config } from '../core/config.ts'
import { runPrimary, type WorkerReady } from './server/cluster.ts'
import { PrimaryLimitClient } from './http/primary-limiter.ts'
import { reloadTurnClient } from './server/reload-turns.ts'
import { createLogs } from './ops/log.ts'

export async function runServeCommand(config: Config): Promise<void> {
  const logs = createLogs(config)
  const { log } = logs
  const clustered = config.JOBSNAP_WORKERS > 1
  if (clustered && cluster.isPrimary) return runPrimary(config, logs)
  // Imported here, not at the top: a cluster's primary serves nothing, and loading the whole server (~0.6 s of
  // CPU through tsx) before it forks delayed every worker's start by that much.
  const { startServer } = await import('./server/start-server.ts')

  const primaryLimits =
    cluster.isWorker && !config.JOBSNAP_REDIS_URL
      ? new PrimaryLimitClient(
          { send: (message) => process.send!(message), on: (event, listener) => process.on(event, listener) },
          log,
        )
      : undefined
  // A worker's hot swaps wait for their turn, so that the workers do not all load at once (server/reload-turns.ts).
  const reloadTurn = cluster.isWorker
    ? reloadTurnClient(
        { send: (message) => process.send!(message), on: (event, listener) => process.on(event, listener) },
        log,
      )
    : undefined
  const server = await startServer({ config, log, access: logs.access, primaryLimits, reloadTurn })
  process.on('SIGHUP', () => void server.reload())
  const exit = () => {
    logs.flush()
    process.exit(0)
  }
  // SIGTERM (an orchestrator, a deploy): drain first, so the load balancer has stopped sending when the port closes.
  // A repeat changes nothing: a process manager that signals the whole group (systemd's default) reaches this
  // process directly and through whatever passes signals on (the huge-pages launcher, a cluster's primary), and
  // a listener taken off after the first would leave the second to Node's default, an exit mid-drain.
  let terminating = false
  process.on('SIGTERM', async () => {
    if (terminating) return
    terminating = true
    server.startDraining()
    log('draining', { signal: 'SIGTERM', drain_ms: config.JOBSNAP_DRAIN_MS })
    await setTimeout(config.JOBSNAP_DRAIN_MS)
    log('shutting down', { signal: 'SIGTERM' })
    await server.close()
    exit()
  })
  // Ctrl-C at a terminal: no load balancer to wait for. A worker leaves it to its primary, which sends SIGTERM.
  process.once('SIGINT', () => {
    if (cluster.isWorker) return
    log('shutting down', { signal: 'SIGINT' })
    void server.close().then(exit)
  })
  // Said only now that the handlers are in place: whoever acts on it (a test, a supervisor) may signal at once,
  // and a SIGTERM before them would be Node's default, an exit without the drain.
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
}
