/**
 * The headers only shared caches read, added to every cacheable response:
 * its cache tags (Surrogate-Key, Cache-Tag, xkey; which ones is
 * JOBSNAP_CACHE_TAG_HEADERS) and, when JOBSNAP_CDN_TTL is set, a lifetime of
 * their own (CDN-Cache-Control, RFC 9213, and Surrogate-Control) beside the
 * browsers' unchanged Cache-Control. Errors never get them (they are no-store).
 */
import { type CacheTagHeader, tagHeaderValues } from '../../core/cache-tags.ts'
import type { Config } from '../../core/config.ts'
import type { HeaderList } from './respond.ts'

interface EdgeSettings {
  names: readonly CacheTagHeader[]
  /** The shared lifetime's header pairs, the same for every response; empty when JOBSNAP_CDN_TTL is 0. */
  lifetime: HeaderList
}

const settingsByConfig = new WeakMap<Config, EdgeSettings>()

function settingsOf(config: Config): EdgeSettings {
  let settings = settingsByConfig.get(config)
  if (settings === undefined) {
    const value = `max-age=${config.JOBSNAP_CDN_TTL}, stale-while-revalidate=${config.JOBSNAP_CDN_STALE_WHILE_REVALIDATE}, stale-if-error=${config.JOBSNAP_CDN_STALE_IF_ERROR}`
    settings = {
      names: config.JOBSNAP_CACHE_TAG_HEADERS,
      lifetime:
        config.JOBSNAP_CDN_TTL > 0
          ? [
              ['cdn-cache-control', value],
              ['surrogate-control', value],
            ]
          : [],
    }
    settingsByConfig.set(config, settings)
  }
  return settings
}

/**
 * The shared-cache headers of a cacheable response tagged `tags` (`all` is
 * added). Tags that would break a cache's limits are left out (see fittingTags).
 */
export function edgeHeaders(config: Config, tags: readonly string[]): HeaderList {
  const { names, lifetime } = settingsOf(config)
  const headers: HeaderList = lifetime.length === 0 ? [] : lifetime.slice()
  if (names.length === 0) return headers
  const { spaced, commas } = tagHeaderValues(tags)
  // Cloudflare's Cache-Tag is comma-separated; Fastly's and Varnish's headers space-separated.
  for (const name of names) headers.push([name, name === 'cache-tag' ? commas : spaced])
  return headers
}
