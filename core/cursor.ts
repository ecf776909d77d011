/**
 * Paging cursors of the v2 lists: a position in a list's sort order (the
 * sort key of the last item a page returned), not an offset, so a page
 * asked for by cursor starts right after that item whatever was published
 * or expired meanwhile, in this snapshot or a later one.
 *
 * Opaque to clients: base64url of a small JSON array, then a check. The
 * check is no secret (a client that rebuilds one gains nothing: any
 * position in the order is harmless); it makes a cursor that was cut,
 * edited or made up a clear 400 instead of a silently wrong page. Decoding
 * is bounded (length first, then one JSON.parse of at most that much) and
 * every field is checked, so a hostile cursor costs microseconds.
 */
import { z } from 'zod'
import { contentHash } from './content-hash.ts'
import { ONE_VALUE, type ParamSpec, type ParseResult, scalarParam } from './params.ts'

/** Longest cursor accepted, in characters: room for the longest one this API makes (a 200-character name, a 500-character slug). */
export const CURSOR_MAX_LENGTH = 2048
/** A company name is kept to this many characters in a cursor (names longer than that compare by their start). */
export const CURSOR_NAME_CHARS = 200
const STRING_MAX = 500
const VERSION = 1
const TOKEN = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{8}$/

/** Where a page of jobs ends: sort=date (posted_at, id) or sort=salary (annual USD or null, posted_at, id). */
export type JobCursor =
  | { sort: 'date'; filters: string; postedAt: number; id: string }
  | { sort: 'salary'; filters: string; salary: number | null; postedAt: number; id: string }

/** Where a page of companies ends: sort=name (name, slug) or sort=jobs (live jobs, name, slug). */
export type CompanyCursor =
  | { sort: 'name'; filters: string; name: string; slug: string }
  | { sort: 'jobs'; filters: string; jobs: number; name: string; slug: string }

type AnyCursor = JobCursor | CompanyCursor

/** A short tag of a query's filters: a cursor carries it, so reusing it with other filters is seen. */
export const filtersTag = (canonicalFilters: string): string => contentHash(canonicalFilters).slice(0, 8)

const check = (payload: string) => contentHash(`cursor:${payload}`).slice(0, 8)

function fields(cursor: AnyCursor): unknown[] {
  switch (cursor.sort) {
    case 'date':
      return [cursor.postedAt, cursor.id]
    case 'salary':
      return [cursor.salary, cursor.postedAt, cursor.id]
    case 'name':
      return [cursor.name.slice(0, CURSOR_NAME_CHARS), cursor.slug]
    case 'jobs':
      return [cursor.jobs, cursor.name.slice(0, CURSOR_NAME_CHARS), cursor.slug]
  }
}

export function encodeCursor(cursor: AnyCursor): string {
  const payload = Buffer.from(JSON.stringify([VERSION, cursor.sort, cursor.filters, ...fields(cursor)])).toString(
    'base64url',
  )
  return `${payload}.${check(payload)}`
}

const isTime = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && Math.abs(v) < 1e15
const isText = (v: unknown): v is string => typeof v === 'string' && v.length > 0 && v.length <= STRING_MAX
const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0
const isSalary = (v: unknown): v is number | null =>
  v === null || (typeof v === 'number' && Number.isFinite(v) && v >= 0)

/** The cursor's fields when they are well formed; undefined otherwise. */
function decodeFields(raw: string): AnyCursor | undefined {
  if (raw.length > CURSOR_MAX_LENGTH || !TOKEN.test(raw)) return undefined
  const [payload, sum] = raw.split('.') as [string, string]
  if (check(payload) !== sum) return undefined
  let value: unknown
  try {
    value = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'))
  } catch {
    return undefined
  }
  if (!Array.isArray(value) || value[0] !== VERSION) return undefined
  const [, sort, filters, a, b, c] = value as unknown[]
  if (typeof filters !== 'string' || filters.length !== 8) return undefined
  const arity = value.length - 3
  if (sort === 'date' && arity === 2 && isTime(a) && isText(b)) return { sort, filters, postedAt: a, id: b }
  if (sort === 'salary' && arity === 3 && isSalary(a) && isTime(b) && isText(c))
    return { sort, filters, salary: a, postedAt: b, id: c }
  if (sort === 'name' && arity === 2 && isText(a) && isText(b)) return { sort, filters, name: a, slug: b }
  if (sort === 'jobs' && arity === 3 && isCount(a) && isText(b) && isText(c))
    return { sort, filters, jobs: a, name: b, slug: c }
  return undefined
}

const refuse = (message: string): ParseResult<never> => ({ ok: false, error: { field: 'cursor', message } })

/**
 * Decodes `raw` for a list sorted by `sort` with filters tagged `filters`.
 * A cursor continues the list it came from: one made under another sort,
 * other filters or the other list is refused (its position would mean
 * another place, or nothing, in this order).
 */
function decodeCursor<S extends AnyCursor['sort']>(
  raw: string,
  sort: S,
  filters: string,
): ParseResult<Extract<AnyCursor, { sort: S }>> {
  const cursor = decodeFields(raw.trim())
  if (cursor === undefined)
    return refuse(
      raw.length > CURSOR_MAX_LENGTH
        ? `cursor must be at most ${CURSOR_MAX_LENGTH} characters; got ${raw.length}. Use the next_cursor of a list response as it is.`
        : 'cursor is not one this API made: use the next_cursor of a list response as it is, or leave cursor out to start again.',
    )
  if (cursor.sort !== sort)
    return refuse(
      `cursor was made for sort=${cursor.sort}, this request has sort=${sort}: a cursor continues the list it came from, with the same sort and filters.`,
    )
  if (cursor.filters !== filters)
    return refuse(
      'cursor was made for other filters: a cursor continues the list it came from, with the same sort and filters (limit and facets may change).',
    )
  return { ok: true, value: cursor as Extract<AnyCursor, { sort: S }> }
}

/** The documented `cursor` parameter of a v2 list of `items` (jobs, companies), one `item` each. */
export const cursorParam = (item: string, items: string): ParamSpec => ({
  kind: 'string',
  schema: z.string().max(CURSOR_MAX_LENGTH),
  description: `Continues the list right after the last ${item} of an earlier page: the next_cursor of that page, opaque, sent as it is. A cursor is a position in the sort order (the last ${item}'s sort key), not an offset, so paging by cursor never skips or repeats a ${item} while ${items} are published or expire between two pages, across snapshots too (only a ${item} whose own sort key changed meanwhile may be seen twice or not at all). It continues the list it came from: another sort or other filters with it: 400 (limit and facets may change). Not a cursor this API made: 400. Together with page: 400.${ONE_VALUE}`,
})

/**
 * The `cursor` parameter of a request, decoded for its sort and filters (their tag, a hash, is made only when there is a cursor);
 * undefined when absent or empty. Refused with `page` (two starting points).
 */
export function cursorFromParams<S extends AnyCursor['sort']>(
  params: URLSearchParams,
  sort: S,
  filters: () => string,
): ParseResult<Extract<AnyCursor, { sort: S }> | undefined> {
  // Opaque: two spellings are one value only when they are the same characters.
  const raw = scalarParam(params, 'cursor', (value) => value.trim())
  if (!raw.ok) return raw
  if (raw.value === undefined) return { ok: true, value: undefined }
  if (params.getAll('page').some((value) => value.trim().length > 0))
    return refuse(
      'cursor and page cannot be used together: a cursor already says where the page starts. Send one of them.',
    )
  return decodeCursor(raw.value, sort, filters())
}
