/**
 * Cache tags: one scheme for every shared cache in front (Fastly's
 * Surrogate-Key, Cloudflare's Cache-Tag, Varnish's xkey). The runtime tags
 * each cacheable response with them; the build lists the ones a publish
 * changed (changed-tags.txt) and `jobsnap purge` sends those, so a CDN drops
 * exactly what changed instead of waiting out a lifetime.
 */

/** On every cacheable response: purging it empties everything jobsnap put in a shared cache. */
export const ALL_TAG = 'all'
/**
 * On every response computed per query from the whole snapshot (v2 job and
 * company lists, filters, feeds, changes, v1 pages of sizes the build does
 * not precompute): any change of a job or a company can move them.
 */
export const LISTS_TAG = 'lists'
/** On /openapi.yaml and /docs (with its assets). */
export const DOCS_TAG = 'docs'
/** On the bulk export files (/api/v2/exports/<name>); their index is computed per snapshot, so `lists`. */
export const EXPORTS_TAG = 'exports'

/** A single job (/api/v2/jobs/{slug}). */
export const jobTag = (slug: string): string => `job:${slug}`
/** A single company (/api/v2/companies/{slug}). */
export const companyTag = (slug: string): string => `company:${slug}`
/** A v1 page by the limit and page it was answered with (after clamping). */
export const v1PageTag = (limit: number, page: number): string => `v1:${limit}:${page}`

/** The response headers that carry tags, each read by one kind of shared cache. */
export const CACHE_TAG_HEADERS = ['surrogate-key', 'cache-tag', 'xkey'] as const
export type CacheTagHeader = (typeof CACHE_TAG_HEADERS)[number]

/**
 * The strictest documented limits of the caches that read these headers:
 * Fastly ignores a surrogate key over 1024 bytes and any key past the first
 * 16,384 bytes of the Surrogate-Key header; Cloudflare reads at most 16 KB of
 * Cache-Tag (after the field name) and refuses to purge a tag over 1024
 * characters. A tag longer than this is left out (it could never be purged);
 * the response still carries `all`.
 */
export const MAX_TAG_BYTES = 1024
/** See MAX_TAG_BYTES: the whole header value, separators included. */
export const MAX_TAG_HEADER_BYTES = 16 * 1024

/**
 * The tags as they fit the caches' limits: no tag over MAX_TAG_BYTES, none
 * twice, and no more than fit one header of MAX_TAG_HEADER_BYTES (counting
 * one separator byte per tag), with `all` last and always kept.
 */
export function fittingTags(tags: readonly string[]): string[] {
  const kept: string[] = []
  // Room for `all` and its separator is kept back from the start.
  let bytes = ALL_TAG.length
  for (const tag of tags) {
    if (tag === ALL_TAG || kept.includes(tag) || !isTag(tag)) continue
    const length = tag.length
    if (length > MAX_TAG_BYTES || bytes + 1 + length > MAX_TAG_HEADER_BYTES) continue
    kept.push(tag)
    bytes += 1 + length
  }
  kept.push(ALL_TAG)
  return kept
}

/**
 * The header values of `tags` as they fit (fittingTags): space-separated
 * (Surrogate-Key, xkey) and comma-separated (Cache-Tag).
 */
export function tagHeaderValues(tags: readonly string[]): { spaced: string; commas: string } {
  const only = tags.length === 1 ? tags[0]! : undefined
  // One tag that fits (a single job, a v1 page), as fittingTags would keep it, `<tag> all`, without its arrays.
  if (only !== undefined && only !== ALL_TAG && only.length <= MAX_TAG_BYTES && isTag(only))
    return { spaced: `${only} ${ALL_TAG}`, commas: `${only},${ALL_TAG}` }
  const fitting = fittingTags(tags)
  // Joined by hand, once per separator: Array#join cost ~0.2 us a header on the single-job path.
  let spaced = fitting[0]!
  let commas = spaced
  for (let i = 1; i < fitting.length; i++) {
    spaced += ` ${fitting[i]}`
    commas += `,${fitting[i]}`
  }
  return { spaced, commas }
}

/** A tag is visible ASCII without commas or spaces: a comma or a space would split it in one of the three headers. */
export function isTag(text: string): boolean {
  // A loop rather than /^[\x21-\x2b\x2d-\x7e]+$/: the same test, at a third of the cost on every tagged answer.
  if (text.length === 0) return false
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code < 0x21 || code > 0x7e || code === 0x2c) return false
  }
  return true
}
