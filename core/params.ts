/**
 * The parameter rules every REST list shares (docs/api.md): their documented
 * form (rendered into `/openapi.yaml`) and strict parsing helpers: integers,
 * comma lists, single-valued parameters refused when given twice with
 * different values, paging clamps. Pure functions.
 */
import { z } from 'zod'
import { withoutAccents } from './fold.ts'
import { queryTermsProblem } from './search.ts'

export const PAGE_SIZE_DEFAULT = 25

/** The 400 message for a path that cannot be percent-decoded: the server's answer and the document's example. */
export const UNDECODABLE_PATH =
  'The path is not valid percent-encoding: every % must start an escape (%XX) and the escapes must spell UTF-8 (%FF never does).'
export const PAGE_SIZE_MAX = 100

/** `lenientInteger`: an integer, but any other value falls back to the default rather than being refused (v1). */
type ParamKind = 'integer' | 'lenientInteger' | 'list' | 'enumList' | 'enum' | 'string'
export interface ParamSpec {
  kind: ParamKind
  /** The documented schema, rendered into OpenAPI. */
  schema: z.ZodType
  description: string
}

/** A comma-separated, repeatable, case-insensitive list filter; `item` is what it keeps (a job, a company). */
export const list = (description: string, example: string, item = 'job'): ParamSpec => ({
  kind: 'list',
  schema: z.string().meta({ examples: [example] }),
  description: `${description} Comma-separated; a ${item} matches any of the values; the parameter may also be repeated. Case-insensitive. An unknown value matches nothing.`,
})

export const pagingParams = {
  page: {
    kind: 'integer',
    schema: z.int().default(1),
    description: 'Page number, from 1. Values below 1 are clamped to 1. A page past the end returns an empty list.',
  },
  limit: {
    kind: 'integer',
    schema: z.int().default(PAGE_SIZE_DEFAULT),
    description: `Page size, 1 to ${PAGE_SIZE_MAX}. Values below 1 become 1 and values above ${PAGE_SIZE_MAX} become ${PAGE_SIZE_MAX}; the response's limit shows the value used.`,
  },
} satisfies Record<string, ParamSpec>

/** Appended to each single-valued v2 parameter's description. */
export const ONE_VALUE = ' Given twice with different values: 400.'

interface ParamError {
  field: string
  message: string
}

export type ParseResult<T> = { ok: true; value: T } | { ok: false; error: ParamError }

const INTEGER = /^[+-]?\d+$/

/**
 * Parses an integer parameter strictly: digits only (a sign and surrounding
 * blanks allowed). An integer too large to hold is still an integer: it
 * becomes the largest safe one of its sign, so the clamps apply to it
 * (limit 100, posted_after 365, a page past the end, a salary nothing reaches).
 */
export function strictInteger(raw: string): number | undefined {
  const trimmed = raw.trim()
  if (!INTEGER.test(trimmed)) return undefined
  const value = Number(trimmed)
  if (!Number.isSafeInteger(value)) return value < 0 ? -Number.MAX_SAFE_INTEGER : Number.MAX_SAFE_INTEGER
  return Object.is(value, -0) ? 0 : value
}

export const clamp = (value: number, min: number, max: number) => Math.min(max, Math.max(min, value))

/** All values of a parameter, repeated keys and commas alike, trimmed, empties dropped. */
export function listValues(params: URLSearchParams, name: string): string[] {
  return params
    .getAll(name)
    .flatMap((value) => value.split(','))
    .map((value) => value.trim().toLowerCase())
    .filter((value) => value.length > 0)
}

/**
 * The value of a single-valued parameter. Given twice with different values
 * it is ambiguous, so it is refused, naming the parameter (the same value
 * twice is just that value).
 */
export function scalarParam(
  params: URLSearchParams,
  name: string,
  /** What makes two spellings one value: by default trimmed, in any letter case, accents or not, as values are matched. */
  sameAs: (value: string) => string = (value) => withoutAccents(value.trim().toLowerCase()),
): ParseResult<string | undefined> {
  const given = params.getAll(name).filter((value) => value.trim().length > 0)
  const distinct = new Map<string, string>()
  for (const value of given) if (!distinct.has(sameAs(value))) distinct.set(sameAs(value), value)
  if (distinct.size > 1) {
    const values = [...distinct.values()]
    return {
      ok: false,
      error: {
        field: name,
        message: `${name} takes one value; got ${values.length}: ${values.map((v) => JSON.stringify(truncate(v))).join(', ')}.`,
      },
    }
  }
  return { ok: true, value: given[0] }
}

/** The first non-empty value (v1 is lenient: a repeated parameter takes its first value). */
export function firstValue(params: URLSearchParams, name: string): string | undefined {
  return params.getAll(name).find((value) => value.trim().length > 0)
}

export function integerParam(
  params: URLSearchParams,
  name: string,
  allowNegative: boolean,
): ParseResult<number | undefined> {
  // 1 and 01 are one value; integers past the safe range are compared as written, not as clamped.
  const scalar = scalarParam(params, name, (value) =>
    INTEGER.test(value.trim()) ? BigInt(value.trim()).toString() : value.trim().toLowerCase(),
  )
  if (!scalar.ok) return scalar
  const raw = scalar.value
  if (raw === undefined) return { ok: true, value: undefined }
  const value = strictInteger(raw)
  if (value === undefined || (!allowNegative && value < 0)) {
    const allowed = allowNegative ? 'an integer' : 'a whole number, 0 or more'
    return {
      ok: false,
      error: { field: name, message: `${name} must be ${allowed}; got ${JSON.stringify(truncate(raw))}.` },
    }
  }
  return { ok: true, value }
}

/**
 * A free-text parameter (trimmed) of at most `maxCharacters` characters,
 * counted as code points, as the OpenAPI document's `maxLength` counts them
 * (an emoji is one character, not two UTF-16 units).
 */
function textParam(params: URLSearchParams, name: string, maxCharacters: number): ParseResult<string | undefined> {
  const found = scalarParam(params, name)
  if (!found.ok) return found
  const value = found.value?.trim()
  if (value === undefined || value.length <= maxCharacters) return { ok: true, value }
  const characters = [...value].length
  if (characters <= maxCharacters) return { ok: true, value }
  return {
    ok: false,
    error: { field: name, message: `${name} must be at most ${maxCharacters} characters; got ${characters}.` },
  }
}

/** A full-text parameter: textParam, and at most MAX_QUERY_TERMS different words (queryTermsProblem). */
export function searchTextParam(
  params: URLSearchParams,
  name: string,
  maxCharacters: number,
): ParseResult<string | undefined> {
  const found = textParam(params, name, maxCharacters)
  const problem = found.ok && found.value !== undefined ? queryTermsProblem(found.value) : undefined
  return problem ? { ok: false, error: { field: name, message: `${name} ${problem}.` } } : found
}

export function truncate(raw: string): string {
  return raw.length > 40 ? `${raw.slice(0, 40)}...` : raw
}
