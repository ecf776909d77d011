/**
 * Listening: h3's own `serve` (srvx on Node), with the deadlines that keep
 * slow clients from holding a connection and the response class that
 * observes every request (ids, access lines, metrics).
 */
import cluster from 'node:cluster'
import type { IncomingMessage } from 'node:http'
import { type H3, serve } from 'h3'
import type { Config } from '../../core/config.ts'
import { resolveClient, trustedProxyMatcher } from '../http/client-id.ts'
import { observedResponseClass } from '../http/observe.ts'
import type { AccessLine } from '../ops/log.ts'
import type { Metrics } from '../ops/metrics.ts'

export function listen(
  app: H3,
  config: Config,
  metrics: Metrics | undefined,
  access: ((line: AccessLine) => void) | undefined,
): ReturnType<typeof serve> {
  const isTrusted = trustedProxyMatcher(config.JOBSNAP_TRUST_PROXY)
  const observer =
    metrics || access
      ? {
          metrics,
          access,
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
  return serve(app, {
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
}
