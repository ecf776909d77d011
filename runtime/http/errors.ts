/**
 * Errors as HTTP answers, written in one place. Handlers throw `httpError()`
 * (h3's HTTPError, carrying the status, the message a client can act on, the
 * parameter at fault and the headers the answer still needs, such as the rate
 * limit's); the app's error hook and the raw-socket paths that never reach the
 * app both render them here. The body is always `{"error":{"code","message","field"?}}`,
 * never cached, never a stack trace.
 */
import { HTTPError } from 'h3'
import type { ErrorBody } from '../../core/schema/api.ts'
import { type HeaderList, type Reply, withCommonHeaders } from './respond.ts'

/** What an HTTPError thrown by a handler carries beyond status and message. */
export interface ErrorDetail {
  /** The query parameter (or path segment) the error is about. */
  field?: string
}

/** A typed HTTP error for a handler to throw; rendered by `errorResponse`. */
export function httpError(
  status: number,
  message: string,
  options: { field?: string; headers?: HeaderList } = {},
): HTTPError<ErrorDetail> {
  return new HTTPError<ErrorDetail>({
    status,
    message,
    headers: options.headers,
    data: options.field ? { field: options.field } : undefined,
  })
}

/** The error body, as bytes. */
export function errorBody(status: number, message: string, field?: string): Buffer {
  const body: ErrorBody = { error: { code: status, message, ...(field ? { field } : {}) } }
  return Buffer.from(JSON.stringify(body))
}

/** The headers every error answer carries, before any of its own. */
export function errorHeaders(bodyLength: number): HeaderList {
  return withCommonHeaders([
    ['content-type', 'application/json; charset=utf-8'],
    ['content-length', String(bodyLength)],
    ['cache-control', 'no-store'],
    ['x-cache', 'BYPASS'],
  ])
}

/** An error answer (HEAD gets the headers only). */
export function errorReply(
  method: string,
  status: number,
  message: string,
  options: { field?: string; headers?: HeaderList } = {},
): Reply {
  const body = errorBody(status, message, options.field)
  const headers = errorHeaders(body.length)
  if (options.headers) headers.push(...options.headers)
  return { status, headers, body: method === 'HEAD' ? null : body }
}

/** The answer for an HTTPError a handler threw. */
export function replyForHttpError(method: string, error: HTTPError): Reply {
  const data = error.data as ErrorDetail | undefined
  return errorReply(method, error.status, error.message, {
    field: typeof data?.field === 'string' ? data.field : undefined,
    headers: error.headers ? [...error.headers] : undefined,
  })
}
