/**
 * Starting and stopping the HTTP server. h3's own `serve` (srvx on Node) is
 * used rather than listhen: h3 v2 is fetch-native and srvx is its adapter,
 * while listhen adds a dev banner, tunnels and a Node-listener shim that a
 * production API does not want in its request path.
 */
import { watch, type FSWatcher } from 'node:fs'
import type { Duplex } from 'node:stream'
import { serve } from 'h3'
import type { Config } from '../core/config.ts'
import { CURRENT_LINK } from '../core/snapshot.ts'
import { createApp, type JobsnapApp } from './app.ts'
import { SharedLimitStore } from './http/redis-limiter.ts'
import { createFileCache } from './snapshot.ts'
import { SnapshotHolder } from './snapshot-holder.ts'

export type Logger = (message: string, fields?: Record<string, unknown>) => void

export interface RunningServer {
  url: string
  snapshots: SnapshotHolder
  jobsnap: JobsnapApp
  /** Reloads `current` now (what SIGHUP and the file watcher do). */
  reload(): Promise<void>
  /** Stops accepting, lets in-flight requests finish, then resolves. */
  close(): Promise<void>
}

export interface StartOptions {
  config: Config
  log?: Logger
  clock?: () => number
  /** Follow `<dist>/current` and reload on change (default true). */
  watch?: boolean
}

/**
 * Requests Node rejects before any handler runs (oversized headers or URL,
 * malformed HTTP, timeouts) still get the JSON error body, never a bare
 * status line or an HTML page.
 */
function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
  if (!socket.writable) {
    socket.destroy()
    return
  }
  const status = error.code === 'HPE_HEADER_OVERFLOW' ? 431 : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400
  const message =
    status === 431 ? 'Request headers or URL too large.' : status === 408 ? 'Request took too long to arrive.' : 'Malformed HTTP request.'
  const body = JSON.stringify({ error: { code: status, message } })
  socket.end(
    `HTTP/1.1 ${status} ${status === 431 ? 'Request Header Fields Too Large' : status === 408 ? 'Request Timeout' : 'Bad Request'}\r\n` +
      `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nCache-Control: no-store\r\n` +
      `X-Content-Type-Options: nosniff\r\nAccess-Control-Allow-Origin: *\r\nConnection: close\r\n\r\n${body}`,
  )
}

export async function startServer(options: StartOptions): Promise<RunningServer> {
  const { config } = options
  const log: Logger = options.log ?? (() => {})
  const fileCache = createFileCache(256 * 1024 * 1024)
  const snapshots = await SnapshotHolder.open(config.JOBSNAP_DIST, fileCache)
  const sharedLimits = config.JOBSNAP_REDIS_URL ? new SharedLimitStore(config.JOBSNAP_REDIS_URL, log) : undefined
  // Counting locally while Redis connects would let a client past the shared limit; wait briefly.
  await sharedLimits?.waitUntilReady(2000)
  const jobsnap = createApp({ config, snapshots, clock: options.clock, log, sharedLimits })

  const server = serve(jobsnap.app, { port: config.PORT, hostname: config.HOST, silent: true, gracefulShutdown: false })
  await server.ready()
  const nodeServer = server.node?.server
  if (nodeServer && 'headersTimeout' in nodeServer) {
    // Slow clients cannot hold a connection open forever.
    nodeServer.headersTimeout = 10_000
    nodeServer.requestTimeout = 30_000
    nodeServer.keepAliveTimeout = 5_000
    nodeServer.on('clientError', answerClientError)
  }

  let reloading: Promise<void> | undefined
  const reload = () => {
    reloading ??= snapshots
      .reload()
      .then(
        (result) => {
          if (result.changed) {
            jobsnap.responseCache.clear()
            log('snapshot loaded', { snapshot_id: result.id })
          }
        },
        (error: Error) => log('snapshot refused; still serving the previous one', { snapshot_id: snapshots.current.id, error: error.message }),
      )
      .finally(() => (reloading = undefined))
    return reloading
  }

  let watcher: FSWatcher | undefined
  if (options.watch !== false) {
    watcher = watch(config.JOBSNAP_DIST, (_event, file) => {
      if (file === CURRENT_LINK) void reload()
    })
  }

  return {
    url: server.url!.replace(/\/$/, ''),
    snapshots,
    jobsnap,
    reload,
    async close() {
      watcher?.close()
      await server.close()
      await sharedLimits?.close()
    },
  }
}
