/**
 * srvx passes a web Response's `statusText` on to Node, and a Response made
 * without one has '' there, so every answer h3 built went out as
 * `HTTP/1.1 200 ` while the fast path's said `200 OK`. Legal (the reason
 * phrase may be empty), but one API should not speak two ways.
 *
 * Done per response, on the ones handed to srvx only, rather than with a
 * ServerResponse subclass for all: with no other reason for one, a subclass
 * measured ~4 us more server CPU per single-job request (27 against 23).
 */
import { STATUS_CODES, type ServerResponse } from 'node:http'

function writeHeadWithPhrase(this: ServerResponse, status: number, ...rest: unknown[]): ServerResponse {
  if (rest[0] === '') rest[0] = STATUS_CODES[status] ?? ''
  // The class's own writeHead (Node's, or a subclass's that observes requests).
  const writeHead = Object.getPrototypeOf(this).writeHead as (...args: unknown[]) => ServerResponse
  return writeHead.call(this, status, ...rest)
}

/** Makes `response` send Node's standard reason phrase where srvx would send an empty one. */
export function withReasonPhrase(response: ServerResponse): ServerResponse {
  response.writeHead = writeHeadWithPhrase as ServerResponse['writeHead']
  return response
}
