/**
 * Starting and stopping the HTTP server. h3's own `serve` (srvx on Node) is
 * used rather than listhen: h3 v2 is fetch-native and srvx is its adapter,
 * while listhen adds a dev banner, tunnels and a Node-listener shim that a
 * production API does not want in its request path.
 */
import cluster from 'node:cluster'
import { randomUUID } from 'node:crypto'
import { watch, type FSWatcher } from 'node:fs'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Duplex } from 'node:stream'
import { serve } from 'h3'
import type { Config } from '../core/config.ts'
import { CURRENT_LINK } from '../core/snapshot.ts'
import { createApp, type JobsnapApp } from './app.ts'
import { clusterMetricsAsker } from './cluster-metrics.ts'
import { resolveClient, trustedProxyMatcher } from './http/client-id.ts'
import { errorBody, errorHeaders } from './http/errors.ts'
import { storedEncodingsBytes } from './http/payload.ts'
import { observedResponseClass } from './http/observe.ts'
import { withReasonPhrase } from './http/reason-phrase.ts'
import type { HeaderList, Reply } from './http/respond.ts'
import { watchGcPauses } from './gc-pauses.ts'
import type { PrimaryLimitClient } from './http/primary-limiter.ts'
import { SharedLimitStore } from './http/redis-limiter.ts'
import { createFileCache } from './snapshot.ts'
import { SnapshotHolder } from './snapshot-holder.ts'
import type { AccessLine, Logger } from './log.ts'
import { Metrics } from './metrics.ts'

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
}

const REASONS: Record<number, string> = {
  400: 'Bad Request',
  405: 'Method Not Allowed',
  408: 'Request Timeout',
  431: 'Request Header Fields Too Large',
}

/** The error body and headers the app would send, for a request it never sees; the connection then closes. */
function errorParts(status: number, message: string): { body: Buffer; headers: HeaderList } {
  const body = errorBody(status, message)
  return { body, headers: [...errorHeaders(body.length), ['connection', 'close']] }
}

/** The JSON error written straight to a socket, for requests that never reach the app; then the connection closes. */
function writeRawError(socket: Duplex, status: number, message: string, extraHeaders: HeaderList = []): void {
  if (!socket.writable) {
    socket.destroy()
    return
  }
  const { body, headers } = errorParts(status, message)
  // What every answer carries, these too: the date (RFC 9110 6.6.1) and a request id for the log and the client.
  const stamped: HeaderList = [
    ...headers,
    ...extraHeaders,
    ['date', new Date().toUTCString()],
    ['x-request-id', randomUUID()],
  ]
  const lines = stamped.map(([name, value]) => `${name}: ${value}\r\n`)
  socket.write(`HTTP/1.1 ${status} ${REASONS[status] ?? 'Error'}\r\n${lines.join('')}\r\n`)
  socket.end(body)
}

/** Connections whose client error has been answered (or is waiting for the responses owed before it). */
const answered = new WeakSet<Duplex>()

/** How long owed responses may take before a connection with a client error is simply closed. */
const OWED_RESPONSES_MAX_MS = 30_000

/**
 * Requests Node rejects before any handler runs (oversized headers or URL,
 * malformed HTTP, timeouts) still get the JSON error body, never a bare
 * status line or an HTML page.
 */
function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
  // Node reports the parser's error again for every later chunk (and the request timeout after it): the
  // first one is answered, the connection reads nothing more, and the rest are ignored.
  if (answered.has(socket)) return
  answered.add(socket)
  socket.pause()
  // Requests read before the bad bytes are owed their answers first, in order (RFC 9112 9.3.2), within a bound.
  const giveUp = setTimeout(() => socket.destroy(), OWED_RESPONSES_MAX_MS)
  giveUp.unref()
  socket.once('close', () => clearTimeout(giveUp))
  afterOwedResponses(socket, () => {
    clearTimeout(giveUp)
    // Bytes after a request that asked to close are not a request: the connection closes once it is answered.
    if (error.code === 'HPE_CLOSED_CONNECTION') {
      socket.end()
      return
    }
    const status = error.code === 'HPE_HEADER_OVERFLOW' ? 431 : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400
    const message =
      status === 431
        ? 'Request headers or URL too large.'
        : status === 408
          ? 'Request took too long to arrive.'
          : 'Malformed HTTP request.'
    writeRawError(socket, status, message)
  })
}

/**
 * Runs `then` once every response the connection still owes has been sent.
 * Node hands the socket to each pipelined response in turn (`_httpMessage`,
 * set from the moment the previous one finished, whether or not its handler
 * has answered yet): each is waited for until there is none.
 */
function afterOwedResponses(socket: Duplex, then: () => void): void {
  const owed = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage
  if (!owed || socket.destroyed) {
    then()
    return
  }
  // The bad bytes are the owed request's own (its body): it can never be answered, so the error goes now, as
  // Node's own handler does, unless that response has begun (then only closing the connection is left).
  if (!owed.req.complete) {
    if (owed.headersSent) socket.destroy()
    else then()
    return
  }
  // 'close' comes after Node has detached the finished response and handed the socket to the next.
  owed.once('close', () => setImmediate(afterOwedResponses, socket, then))
}

/**
 * Request targets srvx refuses with a bare, bodiless 400 before the app sees
 * them (`file:///etc/passwd`, `ftp://x/`, `http://[::1/`): not origin-form,
 * not `*`, not an http(s) absolute-form URL. The same test srvx applies.
 */
function isUnroutableTarget(target: string | undefined): boolean {
  if (!target || target[0] === '/' || target === '*') return false
  if (!URL.canParse(target)) return true
  const url = new URL(target)
  return !((url.protocol === 'http:' || url.protocol === 'https:') && url.host !== '')
}

/** Why a request is refused before routing (status and message), or undefined to let it through. */
function refuseBeforeRouting(request: IncomingMessage): [status: number, message: string] | undefined {
  // Node's parser takes any HTTP/x.y; this server speaks HTTP/1.x (RFC 9110 15.6.6).
  if (request.httpVersionMajor !== 1) return [505, 'HTTP version not supported: this server speaks HTTP/1.1.']
  if (isUnroutableTarget(request.url))
    return [400, 'Malformed request target: use a path (origin-form) or an http(s) URL.']
  // HTTP/1.1 requires a Host header (RFC 9112, 3.2); Node is told not to answer its absence itself (below).
  if (request.httpVersion === '1.1' && request.headers.host === undefined)
    return [400, 'HTTP/1.1 requests need a Host header.']
  // One Host, and a valid one (RFC 9112 3.2: a 400 otherwise); Node keeps the first of several silently.
  const host = request.headers.host
  if (host !== undefined && (!isValidHost(host) || hostLines(request.rawHeaders) > 1))
    return [400, 'The Host header must appear once and be a host name or address, with an optional port.']
  return undefined
}

/**
 * A Host field value (RFC 3986 3.2.2-3.2.3): a bracketed IP literal (IPv6,
 * with a zone id, or IPvFuture), or a reg-name/IPv4 of unreserved and
 * sub-delim characters and %XX escapes; then an optional port of digits.
 */
const HOST_SYNTAX = /^(?:\[[0-9A-Za-z:.%_~-]+\]|(?:[A-Za-z0-9\-._~!$&'()*+,;=]|%[0-9A-Fa-f]{2})*)(?::(\d*))?$/

/**
 * Whether `host` is a valid Host value whose port, if any, is at most 65535,
 * and one a URL can hold: RFC 3986 lets `1.2.3.4.5`, `256.1.1.1` or `[1.2.3.4]`
 * through as names, but the WHATWG URL parser every handler's `event.url`
 * uses throws on them, which would be a 500 instead of this 400. (An empty
 * Host is what RFC 9112 asks for when the target has no authority.)
 */
function isValidHost(host: string): boolean {
  const match = HOST_SYNTAX.exec(host)
  return (
    match !== null &&
    (match[1] === undefined || match[1] === '' || Number(match[1]) <= 65535) &&
    (host === '' || URL.canParse(`http://${host}/`))
  )
}

/** How many Host lines a request carried. */
function hostLines(rawHeaders: string[]): number {
  let count = 0
  for (let i = 0; i < rawHeaders.length; i += 2)
    if (rawHeaders[i]!.length === 4 && rawHeaders[i]!.toLowerCase() === 'host') count++
  return count
}

/** A Reply written to Node's response as srvx would write the same Response (headers in order, then the body). */
function writeReply(response: ServerResponse, reply: Reply): void {
  // A body on loan stays until the response is done with it (sent, or the connection gone).
  if (reply.release) {
    if (response.closed) reply.release()
    else response.once('close', reply.release)
  }
  const headers: string[] = []
  for (const [name, value] of reply.headers) headers.push(name, value)
  response.writeHead(reply.status, headers)
  if (reply.body === null) response.end()
  else response.end(reply.body)
}

/** CONNECT never reaches the app (Node would drop the connection without a word): this is not a proxy. */
function answerConnect(_request: unknown, socket: Duplex): void {
  writeRawError(socket, 405, 'Method CONNECT is not allowed; this API is read-only (GET, HEAD).', [
    ['allow', 'GET, HEAD, OPTIONS'],
  ])
}

export async function startServer(options: StartOptions): Promise<RunningServer> {
  const { config } = options
  const log: Logger = options.log ?? (() => {})
  const fileCache = createFileCache(config.JOBSNAP_FILE_CACHE_MB * 1024 * 1024)
  // Not loaded yet: the port opens first, so /health and /ready answer while a large snapshot loads.
  const snapshots = new SnapshotHolder(config.JOBSNAP_DIST, fileCache, config.JOBSNAP_BODIES_MEMORY_MB * 1024 * 1024)
  const sharedLimits = config.JOBSNAP_REDIS_URL ? await SharedLimitStore.open(config.JOBSNAP_REDIS_URL, log) : undefined
  // Counting locally while Redis connects would let a client past the shared limit; wait briefly.
  await sharedLimits?.waitUntilReady(2000)
  const gcPauses = watchGcPauses()
  let draining = false
  const metrics = config.JOBSNAP_METRICS
    ? new Metrics({
        snapshot: () =>
          snapshots.loaded
            ? {
                id: snapshots.current.id,
                builtAt: snapshots.current.manifest.built_at,
                liveJobs: snapshots.current.jobs.size,
              }
            : undefined,
        ready: () => snapshots.loaded && !draining,
        redisConnected: sharedLimits ? () => sharedLimits.redis.status === 'ready' : undefined,
        cacheBytes: () => ({
          responses: jobsnap.responseCache.bytes,
          encodings: storedEncodingsBytes(),
          files: fileCache.calculatedSize,
        }),
        ringRefusals: () => jobsnap.responseCache.ringRefusals,
      })
    : undefined
  // In a cluster worker a scrape covers every worker: the primary gathers them.
  const clusterText =
    metrics && cluster.isWorker && process.send
      ? clusterMetricsAsker({
          send: (message) => process.send!(message),
          on: (event, listener) => process.on(event, listener),
        })
      : undefined
  const jobsnap = createApp({
    config,
    snapshots,
    clock: options.clock,
    log,
    sharedLimits,
    primaryLimits: sharedLimits ? undefined : options.primaryLimits,
    gcPauses,
    metrics: metrics && {
      text: clusterText ?? (() => metrics.text()),
      contentType: metrics.contentType,
    },
    draining: () => draining,
  })
  const isTrusted = trustedProxyMatcher(config.JOBSNAP_TRUST_PROXY)
  const observer =
    metrics || options.access
      ? {
          metrics,
          access: options.access,
          clientOf: (request: IncomingMessage) =>
            resolveClient(
              request.socket.remoteAddress,
              (request.headers['x-forwarded-for'] as string | undefined) ?? null,
              isTrusted,
            ),
        }
      : undefined

  // Slow clients cannot hold a connection open: headers and the whole request must arrive in time
  // (else 408). Node only checks those deadlines every `connectionsCheckingInterval` (30 s by
  // default, which let a 10 s deadline stretch to 40 s), and only reads it when the server is
  // created, so all of them are passed at creation.
  const requestTimeout = config.JOBSNAP_REQUEST_TIMEOUT_MS
  const headersTimeout = Math.min(config.JOBSNAP_HEADERS_TIMEOUT_MS, requestTimeout)
  const server = serve(jobsnap.app, {
    port: config.PORT,
    hostname: config.HOST,
    silent: true,
    gracefulShutdown: false,
    // srvx listens with `exclusive: true` unless told this; cluster workers need the primary's shared handle.
    reusePort: cluster.isWorker,
    node: {
      headersTimeout,
      requestTimeout,
      keepAliveTimeout: 5_000,
      connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(headersTimeout / 4))),
      // Node would answer a missing Host with a bare 400; refuseBeforeRouting answers it with the JSON error body.
      requireHostHeader: false,
      // Request ids, access lines and metrics: every response Node creates observes its request.
      ...(observer ? { ServerResponse: observedResponseClass(observer) } : {}),
    },
  })
  await server.ready()
  const nodeServer = server.node?.server
  if (nodeServer && 'headersTimeout' in nodeServer) {
    // A socket with no traffic either way (say, a client that stopped reading a large response) is closed.
    nodeServer.timeout = config.JOBSNAP_IDLE_TIMEOUT_MS
    nodeServer.on('clientError', answerClientError)
    nodeServer.on('connect', answerConnect)
    // Only writing a precomputed reply can fail (the reply already stands for any error of its handler).
    const writeFailed = (request: IncomingMessage, response: ServerResponse, error: Error) => {
      log('response failed', { path: request.url, error: error.stack }, 'error')
      response.destroy()
    }
    // Requests srvx or Node would refuse without a body get the JSON error here; single jobs and v1 pages
    // are answered here too, without the web Request and Response srvx makes (see precomputed in app.ts);
    // the rest go to srvx.
    const [handler] = nodeServer.listeners('request') as ((
      request: IncomingMessage,
      response: ServerResponse,
    ) => void)[]
    if (handler) {
      nodeServer.removeAllListeners('request')
      nodeServer.on('request', (request: IncomingMessage, response: ServerResponse) => {
        const refusal = refuseBeforeRouting(request)
        if (refusal !== undefined) {
          const [status, message] = refusal
          const { body, headers } = errorParts(status, message)
          response.writeHead(status, headers.flat()).end(body)
          return
        }
        const precomputed = jobsnap.precomputed(request)
        if (precomputed === undefined) return handler(request, withReasonPhrase(response))
        if (precomputed instanceof Promise) {
          precomputed
            .then((reply) => writeReply(response, reply))
            .catch((error: Error) => writeFailed(request, response, error))
          return
        }
        try {
          writeReply(response, precomputed)
        } catch (error) {
          writeFailed(request, response, error as Error)
        }
      })
    }
  }

  const reloadOnce = () =>
    snapshots.reload().then(
      (result) => {
        if (result.changed) {
          jobsnap.responseCache.clear()
          metrics?.snapshotLoaded(true)
          log('snapshot loaded', { snapshot_id: result.id })
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
  // One reload at a time; a change that arrives while one runs (it may have read `current` before
  // the change) is not dropped: the reload runs again, so the server ends on what `current` names last.
  let reloading: Promise<void> | undefined
  let changedMeanwhile = false
  const reload = (): Promise<void> => {
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
  } catch (error) {
    await close()
    throw error
  }

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
    close,
    metrics,
    startDraining() {
      draining = true
    },
  }
}
