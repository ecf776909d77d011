/**
 * Starting and stopping the HTTP server. h3's own `serve` (srvx on Node) is
 * used rather than listhen: h3 v2 is fetch-native and srvx is its adapter,
 * while listhen adds a dev banner, tunnels and a Node-listener shim that a
 * production API does not want in its request path. The parts: listen.ts
 * (srvx and the slow-client deadlines), answer-requests.ts (the listener in
 * front of srvx: refusals, the fast path, client errors), server-metrics.ts,
 * reload.ts (hot swap and watching `current`); signals and the drain are the
 * serve command's (runtime/cli.ts).
 */
import type { FSWatcher } from 'node:fs'
import type { Config } from '../../core/config.ts'
import { createApp, type JobsnapApp } from '../app/create-app.ts'
import type { PrimaryLimitClient } from '../http/primary-limiter.ts'
import { SharedLimitStore } from '../http/redis-limiter.ts'
import { watchGcPauses } from '../ops/gc-pauses.ts'
import { setHeapGrowth } from '../ops/heap-growth.ts'
import { scavengeAloneWhenCoresAreShared } from '../ops/scavenge-threads.ts'
import type { AccessLine, Logger } from '../ops/log.ts'
import type { Metrics } from '../ops/metrics.ts'
import { SnapshotHolder } from '../snapshot/holder.ts'
import { createFileCache } from '../snapshot/load.ts'
import { answerRequests } from './answer-requests.ts'
import { listen } from './listen.ts'
import { snapshotReloader, watchCurrent } from './reload.ts'
import { serverMetrics } from './server-metrics.ts'

/** How long after the first snapshot has loaded the app imports what it left for first use (createApp's warmUp). */
const WARM_UP_AFTER_MS = 1000

export interface RunningServer {
  url: string
  snapshots: SnapshotHolder
  jobsnap: JobsnapApp
  /** Reloads `current` now (what SIGHUP and the file watcher do). */
  reload(): Promise<void>
  /** Stops accepting, lets in-flight requests finish, then resolves. */
  close(): Promise<void>
  /**
   * From now on /ready answers 503 while everything else is still served, so
   * a load balancer stops sending before `close()` (what SIGTERM does).
   */
  startDraining(): void
  /** Present unless JOBSNAP_METRICS=false. */
  metrics?: Metrics
}

export interface StartOptions {
  config: Config
  log?: Logger
  /** One line per finished request, when given. */
  access?: (line: AccessLine) => void
  clock?: () => number
  /** Follow `<dist>/current` and reload on change (default true). */
  watch?: boolean
  /** A cluster worker's channel to the limits its primary holds (unused when Redis is configured). */
  primaryLimits?: PrimaryLimitClient
  /** A cluster worker's wait for its turn to hot-swap (reload-turns.ts); a single process loads at once. */
  reloadTurn?: () => Promise<() => void>
}

export async function startServer(options: StartOptions): Promise<RunningServer> {
  const { config } = options
  const log: Logger = options.log ?? (() => {})
  setHeapGrowth()
  scavengeAloneWhenCoresAreShared(config.JOBSNAP_WORKERS)
  const fileCache = createFileCache(config.JOBSNAP_FILE_CACHE_MB * 1024 * 1024)
  // Not loaded yet: the port opens first, so /health and /ready answer while a large snapshot loads.
  const snapshots = new SnapshotHolder(
    config.JOBSNAP_DIST,
    fileCache,
    config.JOBSNAP_BODIES_MEMORY_MB * 1024 * 1024,
    config.JOBSNAP_BODIES_HOT_MB * 1024 * 1024,
  )
  const sharedLimits = config.JOBSNAP_REDIS_URL ? await SharedLimitStore.open(config.JOBSNAP_REDIS_URL, log) : undefined
  // Counting locally while Redis connects would let a client past the shared limit; wait briefly.
  await sharedLimits?.waitUntilReady(2000)
  const gcPauses = watchGcPauses()
  let draining = false
  const { metrics, served } = serverMetrics(config, {
    snapshots,
    fileCache,
    sharedLimits,
    draining: () => draining,
    responseCache: () => jobsnap.responseCache,
  })
  const jobsnap = createApp({
    config,
    snapshots,
    clock: options.clock,
    log,
    sharedLimits,
    primaryLimits: sharedLimits ? undefined : options.primaryLimits,
    gcPauses,
    metrics: served,
    draining: () => draining,
  })

  const server = listen(jobsnap.app, config, metrics, options.access)
  await server.ready()
  const nodeServer = server.node?.server
  if (nodeServer && 'headersTimeout' in nodeServer)
    answerRequests(nodeServer, jobsnap, config.JOBSNAP_IDLE_TIMEOUT_MS, log)

  const reload = snapshotReloader(snapshots, jobsnap.responseCache, metrics, log, options.reloadTurn)

  let watcher: FSWatcher | undefined
  const close = async () => {
    watcher?.close()
    gcPauses.stop()
    await server.close()
    await sharedLimits?.close()
  }

  // The first snapshot: a server that cannot load one does not stay up half-started.
  try {
    await snapshots.reload()
    metrics?.snapshotLoaded(true)
    gcPauses.markReady()
  } catch (error) {
    await close()
    throw error
  }

  if (options.watch !== false) watcher = watchCurrent(config.JOBSNAP_DIST, reload)
  // After ready, and a little later still: in a cluster the other workers are usually still loading on the same cores.
  setTimeout(() => void jobsnap.warmUp().catch(() => {}), WARM_UP_AFTER_MS).unref()

  return {
    url: server.url!.replace(/\/$/, ''),
    snapshots,
    jobsnap,
    reload,
    close,
    metrics,
    startDraining() {
      draining = true
    },
  }
}
