/**
 * zod's issues in words an agent, a data team or their users read without
 * knowing zod (MCP tool arguments, dataset records):
 * "expected an integer, got 1.5" rather than "Invalid input: expected int,
 * received number", and one problem per argument (a page of 1e20 broke both
 * the safe-integer bound and the page limit; only the limit is news).
 */
import type { z } from 'zod'

type Issue = z.core.$ZodIssue

const TYPE_WORDS: Record<string, string> = {
  int: 'an integer',
  number: 'a number',
  string: 'a string',
  boolean: 'true or false',
  array: 'a list (a JSON array)',
  object: 'an object',
  record: 'an object',
}

/** What a JSON value is, briefly, for "got ...". */
function describeValue(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'a list'
  if (typeof value === 'number') return String(value)
  if (typeof value === 'string')
    return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}...` : value)}`
  if (typeof value === 'object') return 'an object'
  return String(value)
}

/** A bound as words: "must be at most 200", "must be at least 1 character" ... */
function bound(issue: Extract<Issue, { code: 'too_big' | 'too_small' }>): string {
  const big = issue.code === 'too_big'
  const limit = Number(big ? issue.maximum : issue.minimum)
  const noun = issue.origin === 'string' ? ' character' : issue.origin === 'array' ? ' value' : ''
  const unit = noun && limit !== 1 ? `${noun}s` : noun
  const inclusive = issue.inclusive !== false
  return `must be ${big ? (inclusive ? 'at most' : 'less than') : inclusive ? 'at least' : 'more than'} ${limit}${unit}`
}

/** What a string format asks for, by zod's format name. */
const FORMAT_WORDS: Record<string, string> = {
  datetime: 'an RFC 3339 date-time with its offset, such as 2026-11-10T09:00:00Z',
  date: 'a date such as 2026-11-01',
  uuid: 'a UUID',
  url: 'an http(s) URL',
  email: 'an e-mail address',
}

/** zod's own messages (the ones reworded). */
const ZOD_WORDING = /^(Invalid|Too (big|small))\b/

/** One issue as "<what is wrong>" (without the path). */
function issueWords(issue: Issue): string {
  // A message a schema here wrote itself says more than the generic wording.
  if (!ZOD_WORDING.test(issue.message)) return issue.message
  switch (issue.code) {
    case 'invalid_type': {
      const input = (issue as { input?: unknown }).input
      const expected = TYPE_WORDS[issue.expected] ?? issue.expected
      // With the input reported, an undefined one was never given: the argument is missing.
      return input === undefined ? `required (${expected})` : `expected ${expected}, got ${describeValue(input)}`
    }
    case 'too_big':
    case 'too_small':
      return bound(issue)
    case 'invalid_format': {
      const input = (issue as { input?: unknown }).input
      const expected = FORMAT_WORDS[issue.format]
      return expected
        ? `expected ${expected}${input === undefined ? '' : `, got ${describeValue(input)}`}`
        : issue.message
    }
    case 'invalid_value': {
      const input = (issue as { input?: unknown }).input
      return `must be one of ${issue.values.map((value) => JSON.stringify(value)).join(', ')}${input === undefined ? '' : `, got ${describeValue(input)}`}`
    }
    default:
      return issue.message
  }
}

/** The number type's own range: reported only when nothing else is wrong with the value. */
const isSafeIntegerBound = (issue: Issue) =>
  (issue.code === 'too_big' && Number(issue.maximum) === Number.MAX_SAFE_INTEGER) ||
  (issue.code === 'too_small' && Number(issue.minimum) === Number.MIN_SAFE_INTEGER)

/**
 * Each path's problems as "path: words", one line per path, in the order
 * they came; `root` names the value when the path is empty.
 */
export function describeIssues(issues: readonly Issue[], root: string): string[] {
  return wordedIssues(issues).map(({ path, words }) => `${path || root}: ${words}`)
}

/** Each path's problems in words, one entry per path (dot-joined; '' for the value itself), in the order they came. */
export function wordedIssues(issues: readonly Issue[]): { path: string; words: string }[] {
  const byPath = new Map<string, Issue[]>()
  for (const issue of issues) {
    const where = issue.path.map(String).join('.')
    byPath.set(where, [...(byPath.get(where) ?? []), issue])
  }
  return [...byPath].map(([path, found]) => {
    const kept = found.length > 1 ? found.filter((issue) => !isSafeIntegerBound(issue)) : found
    // The same words twice (an integer's own bound and the number's) say it once.
    return { path, words: [...new Set((kept.length ? kept : found).map(issueWords))].join('; ') }
  })
}
