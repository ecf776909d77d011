/**
 * Answers for what never reaches the app: requests Node rejects before any
 * handler runs (malformed HTTP, oversized headers, timeouts) and CONNECT get
 * the same JSON error body as any other error, written straight to the
 * socket, after the responses the connection still owes.
 */
import { randomUUID } from 'node:crypto'
import type { ServerResponse } from 'node:http'
import type { Duplex } from 'node:stream'
import { errorBody, errorHeaders } from '../http/errors.ts'
import type { HeaderList } from '../http/respond.ts'

const REASONS: Record<number, string> = {
  400: 'Bad Request',
  405: 'Method Not Allowed',
  408: 'Request Timeout',
  431: 'Request Header Fields Too Large',
}

/** The error body and headers the app would send, for a request it never sees; the connection then closes. */
export function errorParts(status: number, message: string): { body: Buffer; headers: HeaderList } {
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
export function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
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

/** CONNECT never reaches the app (Node would drop the connection without a word): this is not a proxy. */
export function answerConnect(_request: unknown, socket: Duplex): void {
  writeRawError(socket, 405, 'Method CONNECT is not allowed; this API is read-only (GET, HEAD).', [
    ['allow', 'GET, HEAD, OPTIONS'],
  ])
}
