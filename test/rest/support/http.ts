/**
 * Real HTTP against a real server on loopback, with the response shapes the
 * tests read. Bodies are typed by the public schemas in core/schema/api.ts
 * (types only; the OpenAPI suite validates the shapes themselves).
 */
import { expect } from 'vitest'
import type { ErrorBody, V1ListResponse, V2Job, V2ListResponse } from '../../../core/index.ts'

export type { ErrorBody, V1ListResponse, V2Job, V2ListResponse }

export interface JsonResponse<T> {
  status: number
  headers: Headers
  body: T
  text: string
}

/** GET (or another method) and parse JSON; identity encoding unless the caller asks otherwise. */
export async function request<T>(url: string, init: RequestInit = {}): Promise<JsonResponse<T>> {
  const headers = new Headers(init.headers)
  if (!headers.has('accept-encoding')) headers.set('accept-encoding', 'identity')
  const response = await fetch(url, { ...init, headers })
  const text = await response.text()
  let body: T
  try {
    body = (text === '' ? undefined : JSON.parse(text)) as T
  } catch {
    throw new Error(
      `${init.method ?? 'GET'} ${url}: ${response.status} with a body that is not JSON: ${text.slice(0, 200)}`,
    )
  }
  return { status: response.status, headers: response.headers, body, text }
}

export async function getV2List(base: string, query: string | URLSearchParams): Promise<JsonResponse<V2ListResponse>> {
  const qs = query.toString()
  const res = await request<V2ListResponse>(`${base}/api/v2/jobs${qs ? `?${qs}` : ''}`)
  if (res.status !== 200) throw new Error(`GET /api/v2/jobs?${qs}: ${res.status} ${res.text.slice(0, 300)}`)
  expect(res.headers.get('x-api-version')).toBe('v2')
  expect(res.headers.get('content-type')).toMatch(/^application\/json/)
  return res
}

/**
 * Every job a v2 query matches, paging with `limit` until has_more is false,
 * checking the wrapper of each page on the way.
 */
export async function getAllV2(
  base: string,
  query: URLSearchParams,
  limit = 100,
): Promise<{ jobs: V2Job[]; total: number }> {
  const jobs: V2Job[] = []
  let total: number | undefined
  for (let page = 1; ; page++) {
    const params = new URLSearchParams(query)
    params.delete('page')
    params.delete('limit')
    params.set('page', String(page))
    params.set('limit', String(limit))
    const { body } = await getV2List(base, params)
    expect(body.page).toBe(page)
    expect(body.limit).toBe(limit)
    if (total === undefined) total = body.total
    expect(body.total, 'total is the same on every page').toBe(total)
    expect(body.has_more).toBe(page * limit < body.total)
    expect(body.data.length).toBe(Math.max(0, Math.min(limit, body.total - (page - 1) * limit)))
    jobs.push(...body.data)
    if (!body.has_more) break
    if (page > 10_000) throw new Error('runaway paging')
  }
  return { jobs, total: total ?? 0 }
}

/** Asserts the error body and headers (docs/api.md: Errors); returns the error. */
export function expectErrorResponse(res: JsonResponse<unknown>, status: number, field?: string): ErrorBody['error'] {
  expect(res.status).toBe(status)
  expect(res.headers.get('content-type')).toMatch(/^application\/json/)
  expect(res.headers.get('cache-control')).toBe('no-store')
  expect(res.headers.get('x-cache')).toBe('BYPASS')
  expect(res.headers.get('access-control-allow-origin')).toBe('*')
  const body = res.body as ErrorBody
  expect(body).toBeTypeOf('object')
  expect(Object.keys(body)).toEqual(['error'])
  expect(body.error.code).toBe(status)
  expect(body.error.message).toBeTypeOf('string')
  expect(body.error.message.length).toBeGreaterThan(10)
  for (const key of Object.keys(body.error)) expect(['code', 'message', 'field']).toContain(key)
  if (field !== undefined) expect(body.error.field).toBe(field)
  return body.error
}

/** Rate-limit headers every v1/v2 response carries (docs/api.md: Rate limits). */
export function expectRateLimitHeaders(headers: Headers, limit: number): { remaining: number; reset: number } {
  expect(headers.get('x-ratelimit-limit')).toBe(String(limit))
  const remaining = Number(headers.get('x-ratelimit-remaining'))
  const reset = Number(headers.get('x-ratelimit-reset'))
  expect(Number.isInteger(remaining) && remaining >= 0 && remaining <= limit).toBe(true)
  expect(Number.isInteger(reset) && reset >= 0).toBe(true)
  expect(headers.get('ratelimit-policy')).toBe(`"rest";q=${limit};w=60`)
  expect(headers.get('ratelimit')).toBe(`"rest";r=${remaining};t=${reset}`)
  return { remaining, reset }
}
