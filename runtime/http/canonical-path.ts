import { SLUG_PATTERN } from '../../core/schema/dataset.ts'

/**
 * One spelling per public resource: a path given with a trailing slash,
 * doubled slashes or other letter case in its fixed segments
 * (`/API/V2/Jobs/`, `//api/v1`, `/feeds/jobs.rss/`) is redirected (308) to
 * the canonical one rather than answered 404 or twice under two cache keys.
 * Slugs are left as given: a slug in other letters is another slug.
 */

interface CanonicalPath {
  /** Fixed segments in their canonical spelling; `*` stands for a slug. */
  segments: readonly string[]
  /** The API version whose rate limit and headers the path's answers carry; absent for unlimited documents. */
  version?: 'v1' | 'v2'
}

const CANONICAL_PATHS: readonly CanonicalPath[] = [
  { segments: ['api', 'v1'], version: 'v1' },
  ...[
    ['api', 'v2', 'jobs'],
    ['api', 'v2', 'jobs', '*'],
    ['api', 'v2', 'filters'],
    ['api', 'v2', 'changes'],
    ['api', 'v2', 'companies'],
    ['api', 'v2', 'companies', '*'],
    ['feeds', 'jobs.rss'],
    ['feeds', 'jobs.atom'],
    ['feeds', 'jobs.json'],
  ].map((segments) => ({ segments, version: 'v2' as const })),
  { segments: ['openapi.yaml'] },
  { segments: ['api', 'mcp'] },
  // Operators' only: one spelling, so a front that blocks `/metrics` blocks every way to it.
  { segments: ['metrics'] },
]

/** Anything that might make a path non-canonical; most requests are told apart by this one test. */
const MAYBE_OTHER_SPELLING = /[A-Z%]|\/\/|\/\.|.\/$/

/**
 * The canonical spelling of `pathname` when it is another spelling of a
 * public path, with the API version whose limit it counts against (none
 * for the OpenAPI document); undefined when it is canonical already or
 * not a public path at all.
 */
export function canonicalPath(pathname: string): { path: string; version?: 'v1' | 'v2' } | undefined {
  if (!MAYBE_OTHER_SPELLING.test(pathname)) return undefined
  // A path that cannot be percent-decoded is no spelling of anything: it is refused (400), not redirected.
  if (!isDecodablePath(pathname)) return undefined
  // Segments decoded, with `.` and `..` resolved as RFC 3986 5.2.4 does (`..` removes the segment before it,
  // an empty one included: `/jobs//..` is `/jobs/`), each beside its spelling as given; then empty ones dropped.
  let given: string[] = []
  let segments: string[] = []
  for (const spelled of pathname.split('/').slice(1)) {
    const segment = decodedSegment(spelled)
    if (segment === '.') continue
    if (segment === '..') {
      given.pop()
      segments.pop()
      continue
    }
    given.push(spelled)
    segments.push(segment)
  }
  given = given.filter((_, i) => segments[i] !== '')
  segments = segments.filter((segment) => segment !== '')
  const shape = CANONICAL_PATHS.find(
    ({ segments: fixed }) =>
      fixed.length === segments.length && fixed.every((part, i) => part === '*' || part === segments[i]!.toLowerCase()),
  )
  if (!shape) return undefined
  // A slug spelled with escapes goes to its plain spelling when that is a slug at all (`%61cme` -> `acme`);
  // anything else stays as given (and is answered 404).
  const slugAt = (i: number) => (SLUG_PATTERN.test(segments[i]!) ? segments[i]! : given[i]!)
  const path = `/${shape.segments.map((part, i) => (part === '*' ? slugAt(i) : part)).join('/')}`
  return path === pathname ? undefined : { path, version: shape.version }
}

/** Whether `pathname` percent-decodes (every % starts an escape, and the escapes spell UTF-8). */
export function isDecodablePath(pathname: string): boolean {
  try {
    decodeURI(pathname)
    return true
  } catch {
    return false
  }
}

/**
 * A path segment as its percent-escapes spell it (`caf%C3%A9` -> `café`,
 * `%61cme` -> `acme`): escapes are another spelling of the same characters
 * (RFC 3986). The segment as given when it does not decode.
 */
export function decodedSegment(segment: string): string {
  if (!segment.includes('%')) return segment
  try {
    return decodeURIComponent(segment)
  } catch {
    return segment
  }
}
