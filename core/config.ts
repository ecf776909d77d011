/**
 * All configuration in one typed place. Each setting has an environment
 * variable and a default; the CLI's flags override the environment. The
 * configuration table in docs/operating.md mirrors this file.
 */
import { z } from 'zod'
import { CACHE_TAG_HEADERS } from './cache-tags.ts'

const intFromEnv = (min: number) => z.coerce.number().int().min(min)
const numberFromEnv = (min: number) => z.coerce.number().min(min)
const csv = z.string().transform((value) =>
  value
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean),
)

const ConfigSchema = z.object({
  /** Port the server listens on. */
  PORT: intFromEnv(0).max(65535).default(3000),
  /** Address the server binds. */
  HOST: z.string().default('127.0.0.1'),
  /**
   * Server processes sharing the port (node:cluster). 1 serves from this
   * process; N > 1 forks N workers whose rate limits stay exact per client
   * (held in the primary, or in Redis when JOBSNAP_REDIS_URL is set).
   */
  JOBSNAP_WORKERS: intFromEnv(1).max(64).default(1),
  /** Dataset folder read by `jobsnap build`. */
  JOBSNAP_DATA: z.string().default('data'),
  /** Snapshot folder written by the build and served by the runtime. */
  JOBSNAP_DIST: z.string().default('dist'),
  /** Peers whose X-Forwarded-For is believed: addresses or CIDRs, comma-separated. */
  JOBSNAP_TRUST_PROXY: csv.default([]),
  /** REST requests per rolling minute per client (v1 and v2 together). */
  JOBSNAP_REST_LIMIT: intFromEnv(1).default(60),
  /** MCP bucket size per client. */
  JOBSNAP_MCP_BURST: intFromEnv(1).default(60),
  /** MCP bucket refill, requests per second. */
  JOBSNAP_MCP_RATE: numberFromEnv(0.001).default(5),
  /** Response cache lifetime, seconds (also Cache-Control max-age). */
  JOBSNAP_CACHE_TTL: intFromEnv(0).default(60),
  /**
   * Headers that carry the cache tags on every cacheable response, comma-separated:
   * `surrogate-key` (Fastly), `cache-tag` (Cloudflare), `xkey` (Varnish), or `none`.
   */
  JOBSNAP_CACHE_TAG_HEADERS: csv
    .transform((names) => names.map((name) => name.toLowerCase()))
    .pipe(z.array(z.enum([...CACHE_TAG_HEADERS, 'none'])))
    .transform((names) => [...new Set(names.filter((name) => name !== 'none'))] as (typeof CACHE_TAG_HEADERS)[number][])
    .default([...CACHE_TAG_HEADERS]),
  /**
   * Lifetime for shared caches (CDN-Cache-Control and Surrogate-Control), seconds;
   * 0 sends neither. Browsers keep Cache-Control's. Long is safe only with `jobsnap purge` after each publish.
   */
  JOBSNAP_CDN_TTL: intFromEnv(0).default(0),
  /** Shared caches may serve a stale copy this many seconds while they fetch a fresh one. */
  JOBSNAP_CDN_STALE_WHILE_REVALIDATE: intFromEnv(0).default(60),
  /** Shared caches may serve a stale copy this many seconds while jobsnap answers errors or is down. */
  JOBSNAP_CDN_STALE_IF_ERROR: intFromEnv(0).default(86_400),
  /** Fastly's API, where `jobsnap purge --fastly` sends purges (changed only for tests). */
  JOBSNAP_FASTLY_API_URL: z.url().default('https://api.fastly.com'),
  /**
   * Fastly purge requests per second, at most 256 keys each. Fastly does not
   * rate-limit key purges; this paces them, and a publish needing more
   * requests than a minute of this pace purges `all` instead.
   */
  JOBSNAP_FASTLY_PURGE_RATE: numberFromEnv(0.001).default(10),
  /** Cloudflare's API, where `jobsnap purge --cloudflare` sends purges (changed only for tests). */
  JOBSNAP_CLOUDFLARE_API_URL: z.url().default('https://api.cloudflare.com/client/v4'),
  /** Cache tags per Cloudflare purge request (Cloudflare takes at most 100 on every plan). */
  JOBSNAP_CLOUDFLARE_PURGE_BATCH: intFromEnv(1).default(100),
  /**
   * Cloudflare purge requests per second: 5 on Pro, 10 on Business, 50 on Enterprise; Free allows
   * 5 a minute (0.083). A publish needing more requests than a minute of this pace purges `all` instead.
   */
  JOBSNAP_CLOUDFLARE_PURGE_RATE: numberFromEnv(0.001).default(5),
  /** Response cache size bound, megabytes. */
  JOBSNAP_CACHE_MB: intFromEnv(1).default(64),
  /**
   * Snapshot files kept in memory, megabytes. A miss is a synchronous read
   * the OS page cache usually answers in microseconds, so this trades memory
   * for a few syscalls; 0 turns it off.
   */
  JOBSNAP_FILE_CACHE_MB: intFromEnv(0).default(64),
  /**
   * A snapshot's packed v2 bodies up to this size, megabytes, are held in
   * each process's memory (a list page is then copies, no system call per
   * job); larger ones are read by position from the page cache, which holds
   * one copy for every worker (1.6 GB at 1M jobs). 0: always from the page cache.
   */
  JOBSNAP_BODIES_MEMORY_MB: intFromEnv(0).default(256),
  /**
   * When the v2 bodies are read from the page cache: megabytes of the bodies
   * list pages show most (the newest jobs and the best paid: what first pages
   * hold) kept in each process's memory once read, saving a system call per
   * body shown. 0: none.
   */
  JOBSNAP_BODIES_HOT_MB: intFromEnv(0).default(64),
  /** Most clients the rate limiters remember at once (memory bound). */
  JOBSNAP_MAX_CLIENTS: intFromEnv(1000).default(100_000),
  /** Slow clients: the request headers must arrive within this many milliseconds (else 408). */
  JOBSNAP_HEADERS_TIMEOUT_MS: intFromEnv(100).default(10_000),
  /** The whole request, headers and body, must arrive within this many milliseconds (else 408). */
  JOBSNAP_REQUEST_TIMEOUT_MS: intFromEnv(100).default(30_000),
  /** A connection with no traffic either way for this long is closed (e.g. a client that stops reading). */
  JOBSNAP_IDLE_TIMEOUT_MS: intFromEnv(100).default(30_000),
  /** Public website the v1 usage notice links to. */
  JOBSNAP_SITE_URL: z.url().default('https://jobsnap.example'),
  /** Allowed Origin values for /api/mcp, comma-separated; `*` allows any. */
  JOBSNAP_MCP_ORIGINS: csv.default(['*']),
  /** Snapshots kept on disk for rollback. */
  JOBSNAP_KEEP_SNAPSHOTS: intFromEnv(1).default(3),
  /**
   * A rebuild writes only the job files new or changed since the last full set (core/job-layers.ts) while
   * those, with the jobs gone since, stay within this percentage of the live jobs; past it, or at 0, a full set.
   */
  JOBSNAP_JOB_DELTA_MAX_PERCENT: intFromEnv(0).max(100).default(20),
  /**
   * On Linux, `jobsnap build`, `serve` and `generate`, run as `npm start`, `npm run build` or the `jobsnap`
   * command (bin/jobsnap.mjs), rerun themselves with glibc's malloc backing large buffers with transparent
   * huge pages (bin/huge-pages.mjs says why); false runs them in the one process on 4 KB pages. Read by
   * the launcher before anything else.
   */
  JOBSNAP_HUGE_PAGES: z.stringbool().default(true),
  /** Redis URL for shared rate limits across replicas; empty: in-memory. */
  JOBSNAP_REDIS_URL: z.string().default(''),
  /** Log format: pretty on a terminal, json otherwise. */
  JOBSNAP_LOG: z.enum(['pretty', 'json', 'silent']).optional(),
  /** One log line per request (method, path, status, bytes, duration, client, cache, request id). */
  JOBSNAP_ACCESS_LOG: z.stringbool().default(true),
  /** Prometheus metrics at /metrics; false removes the endpoint and the per-request counting. */
  JOBSNAP_METRICS: z.stringbool().default(true),
  /** Peers allowed to read /metrics: addresses or CIDRs, comma-separated (the TCP peer, never X-Forwarded-For). */
  JOBSNAP_METRICS_ALLOW: csv.default(['127.0.0.0/8', '::1']),
  /**
   * After SIGTERM, keep serving this many milliseconds with /ready answering
   * 503, so a load balancer stops sending new requests before the port closes.
   */
  JOBSNAP_DRAIN_MS: intFromEnv(0).default(5_000),
})
export type Config = z.infer<typeof ConfigSchema>

/** Every setting's default, from the schema above: code that needs one reads it here rather than repeating it. */
export const DEFAULTS: Readonly<Config> = Object.freeze(ConfigSchema.parse({}))

/** The REST bucket's rolling window, seconds: JOBSNAP_REST_LIMIT counts requests per this window. Fixed, not a setting. */
export const REST_WINDOW_SECONDS = 60
export type ConfigInput = Partial<Record<keyof Config, string | number | string[] | undefined>>

/**
 * Reads configuration from `env`, with `overrides` (CLI flags) on top.
 * Throws one error listing every bad setting.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: ConfigInput = {}): Config {
  const raw: Record<string, unknown> = {}
  for (const key of Object.keys(ConfigSchema.shape)) {
    const value = overrides[key as keyof Config] ?? env[key]
    if (value !== undefined && value !== '') raw[key] = Array.isArray(value) ? value.join(',') : value
  }
  const parsed = ConfigSchema.safeParse(raw)
  if (!parsed.success) {
    const problems = parsed.error.issues.map(
      (issue) => `  ${issue.path.join('.')}: ${issue.message} (got ${JSON.stringify(raw[String(issue.path[0])])})`,
    )
    throw new Error(`invalid configuration:\n${problems.join('\n')}`)
  }
  return parsed.data
}
