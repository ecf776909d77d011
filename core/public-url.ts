/**
 * The public address clients reach jobsnap at (JOBSNAP_SITE_URL, kept in
 * each snapshot's manifest), without a trailing slash, so paths join it as
 * `${base}/feeds/jobs.rss`. Absolute links in bodies come from here, never
 * from a request's Host or forwarded headers: those bodies are cached and
 * shared, so one client's header must not end up in another's links.
 */
export function publicBaseUrl(siteUrl: string): string {
  return siteUrl.replace(/\/+$/, '')
}
