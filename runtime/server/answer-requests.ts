/**
 * The Node request listener in front of srvx. Requests srvx or Node would
 * refuse without a body get the JSON error here; single jobs and v1 pages are
 * answered here too, without the web Request and Response srvx makes (see
 * fast-path.ts in app/); the rest go to srvx. Also the answers for client
 * errors, CONNECT and idle sockets.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import type { JobsnapApp } from '../app/create-app.ts'
import { withReasonPhrase } from '../http/reason-phrase.ts'
import type { Reply } from '../http/respond.ts'
import type { Logger } from '../ops/log.ts'
import { answerClientError, answerConnect, errorParts } from './client-errors.ts'
import { refuseBeforeRouting } from './refuse-before-routing.ts'

/** A Reply written to Node's response as srvx would write the same Response (headers in order, then the body). */
function writeReply(response: ServerResponse, reply: Reply): void {
  // A body on loan stays until the response is done with it (sent, or the connection gone).
  if (reply.release) {
    if (response.closed) reply.release()
    else response.once('close', reply.release)
  }
  const pairs = reply.headers
  const headers: string[] = new Array(pairs.length * 2)
  for (let i = 0; i < pairs.length; i++) {
    const pair = pairs[i]!
    headers[2 * i] = pair[0]
    headers[2 * i + 1] = pair[1]
  }
  response.writeHead(reply.status, headers)
  if (reply.body === null) response.end()
  else response.end(reply.body)
}

/**
 * Puts the listener in front of srvx's on `nodeServer`, and the answers to
 * what never becomes a request. The listener is made once: nothing is made
 * per request beyond what srvx would make.
 */
export function answerRequests(nodeServer: Server, jobsnap: JobsnapApp, idleTimeoutMs: number, log: Logger): void {
  // A socket with no traffic either way (say, a client that stopped reading a large response) is closed.
  nodeServer.timeout = idleTimeoutMs
  nodeServer.on('clientError', answerClientError)
  nodeServer.on('connect', answerConnect)
  // Only writing a precomputed reply can fail (the reply already stands for any error of its handler).
  const writeFailed = (request: IncomingMessage, response: ServerResponse, error: Error) => {
    log('response failed', { path: request.url, error: error.stack }, 'error')
    response.destroy()
  }
  const [handler] = nodeServer.listeners('request') as ((request: IncomingMessage, response: ServerResponse) => void)[]
  if (!handler) return
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
