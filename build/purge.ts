/**
 * `jobsnap purge`: sends the published snapshot's changed-tags.txt to the
 * shared caches in front (Varnish, Fastly, Cloudflare), in the batches each
 * takes, paced to its request rate, retried with backoff on 429 and 5xx
 * (Retry-After honoured). When the tags need more requests than a minute of
 * a target's rate, that target purges `all` instead (and says so). A failed
 * purge names what was not purged; the snapshot stays published either way.
 * Tokens come from the environment and are never printed.
 */
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { ALL_TAG, isTag } from '../core/cache-tags.ts'
import type { Config } from '../core/config.ts'
import { CURRENT_LINK, publishedSnapshotId } from '../core/snapshot.ts'
import { CHANGED_TAGS_FILE } from './changed-files.ts'
import { waitForOrigin } from './wait-for-origin.ts'

/** One shared cache to purge. */
interface PurgeTarget {
  /** As output names it: `fastly service abc`. */
  name: string
  /** The tags split into the requests the target takes. */
  batches(tags: readonly string[]): string[][]
  /** Requests the target takes a minute (Infinity: no limit); sent no faster than this. */
  requestsPerMinute: number
  send(batch: readonly string[]): Promise<Response>
  /** Whether a 2xx answer says the purge happened (Cloudflare's body can say it did not). */
  succeeded?(body: string): boolean
}

/** Fastly takes at most 256 keys per purge request. */
const FASTLY_KEYS_PER_REQUEST = 256
/**
 * A request header's value stays under these: Fastly refuses request headers
 * over 69 KB in all; Varnish's default http_req_hdr_len is 8 KB per header.
 */
const FASTLY_HEADER_BYTES = 32 * 1024
const VARNISH_HEADER_BYTES = 4 * 1024
/** Each request gives up after this long (the retry policy then decides). */
const REQUEST_TIMEOUT_MS = 30_000

/** Consecutive tags, at most `count` of them and at most `bytes` when joined by one separator each. */
function batchTags(tags: readonly string[], count: number, bytes = Number.POSITIVE_INFINITY): string[][] {
  const batches: string[][] = []
  let current: string[] = []
  let length = 0
  for (const tag of tags) {
    const joined = current.length === 0 ? tag.length : length + 1 + tag.length
    if (current.length > 0 && (current.length >= count || joined > bytes)) {
      batches.push(current)
      current = []
      length = tag.length
    } else length = joined
    current.push(tag)
  }
  if (current.length > 0) batches.push(current)
  return batches
}

const trimSlash = (url: string) => url.replace(/\/+$/, '')
const perMinute = (perSecond: number) => Math.max(1, Math.floor(perSecond * 60))

function varnishTarget(url: string): PurgeTarget {
  return {
    name: `varnish ${url}`,
    batches: (tags) => batchTags(tags, Number.POSITIVE_INFINITY, VARNISH_HEADER_BYTES),
    requestsPerMinute: Number.POSITIVE_INFINITY,
    // The VCL takes `PURGE` with the keys in an `xkey` request header and answers 200 once purged.
    send: (batch) =>
      fetch(url, {
        method: 'PURGE',
        headers: { xkey: batch.join(' ') },
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      }),
  }
}

function fastlyTarget(config: Config, serviceId: string, token: string, soft: boolean): PurgeTarget {
  const url = `${trimSlash(config.JOBSNAP_FASTLY_API_URL)}/service/${encodeURIComponent(serviceId)}/purge`
  return {
    name: `fastly service ${serviceId}`,
    batches: (tags) => batchTags(tags, FASTLY_KEYS_PER_REQUEST, FASTLY_HEADER_BYTES),
    requestsPerMinute: perMinute(config.JOBSNAP_FASTLY_PURGE_RATE),
    send: (batch) =>
      fetch(url, {
        method: 'POST',
        headers: {
          'fastly-key': token,
          'surrogate-key': batch.join(' '),
          accept: 'application/json',
          // Soft: marks the objects stale (served while revalidating, or on error) instead of dropping them.
          ...(soft ? { 'fastly-soft-purge': '1' } : {}),
        },
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      }),
  }
}

function cloudflareTarget(config: Config, zoneId: string, token: string): PurgeTarget {
  const url = `${trimSlash(config.JOBSNAP_CLOUDFLARE_API_URL)}/zones/${encodeURIComponent(zoneId)}/purge_cache`
  return {
    name: `cloudflare zone ${zoneId}`,
    batches: (tags) => batchTags(tags, config.JOBSNAP_CLOUDFLARE_PURGE_BATCH),
    requestsPerMinute: perMinute(config.JOBSNAP_CLOUDFLARE_PURGE_RATE),
    send: (batch) =>
      fetch(url, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ tags: batch }),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      }),
    succeeded(body) {
      try {
        return (JSON.parse(body) as { success?: unknown }).success !== false
      } catch {
        return true
      }
    },
  }
}

/** Seconds (or the date) a Retry-After header asks for, as milliseconds; undefined without a usable one. */
function retryAfterMs(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : Math.max(0, date - now)
}

export interface PurgeIo {
  /** What was purged (stdout). */
  out(line: string): void
  /** Retries, fallbacks and failures (stderr). */
  err(line: string): void
  sleep?(ms: number): Promise<void>
  /** First retry's wait without Retry-After, doubled each time (default 1 s, at most 30 s). */
  retryBaseMs?: number
  /** Tries per request, the first included (default 5). */
  attempts?: number
  /** A Retry-After longer than this fails the purge rather than wait (default 120 s). */
  maxRetryAfterMs?: number
}

interface Sent {
  ok: boolean
  error?: string
}

/** What a failure says, without any secret a body might echo, on one short line. */
function scrub(text: string, secrets: readonly string[]): string {
  let out = text.replace(/\s+/g, ' ').trim().slice(0, 300)
  for (const secret of secrets) if (secret) out = out.replaceAll(secret, '[redacted]')
  return out
}

async function sendWithRetry(target: PurgeTarget, batch: string[], io: PurgeIo, secrets: string[]): Promise<Sent> {
  const sleep = io.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)))
  const attempts = io.attempts ?? 5
  const base = io.retryBaseMs ?? 1000
  const maxWait = io.maxRetryAfterMs ?? 120_000
  for (let attempt = 1; ; attempt++) {
    let error: string
    let retryable: boolean
    let asked: number | undefined
    try {
      const response = await target.send(batch)
      const body = await response.text()
      if (response.ok && (target.succeeded?.(body) ?? true)) return { ok: true }
      error = `HTTP ${response.status}${body ? `: ${scrub(body, secrets)}` : ''}`
      retryable = response.status === 429 || response.status >= 500
      asked = retryAfterMs(response.headers.get('retry-after'))
    } catch (cause) {
      error = `no answer: ${scrub(cause instanceof Error ? cause.message : String(cause), secrets)}`
      retryable = true
    }
    if (!retryable || attempt >= attempts) return { ok: false, error }
    const wait = asked ?? Math.min(30_000, base * 2 ** (attempt - 1))
    if (wait > maxWait) return { ok: false, error: `${error} (asked to wait ${Math.ceil(wait / 1000)} s)` }
    io.err(
      `${target.name}: ${error}; retrying in ${(wait / 1000).toFixed(1)} s (attempt ${attempt + 1} of ${attempts})`,
    )
    await sleep(wait)
  }
}

/** Purges `tags` at one target; true when every request succeeded. */
async function purgeAt(target: PurgeTarget, tags: string[], io: PurgeIo, secrets: string[]): Promise<boolean> {
  const sleep = io.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)))
  let batches = target.batches(tags)
  if (batches.length > target.requestsPerMinute) {
    io.err(
      `${target.name}: ${tags.length} tags take ${batches.length} requests, more than the ${target.requestsPerMinute} a minute its rate allows; purging \`${ALL_TAG}\` instead (every jobsnap answer it holds).`,
    )
    batches = [[ALL_TAG]]
  }
  const interval = Number.isFinite(target.requestsPerMinute) ? 60_000 / target.requestsPerMinute : 0
  let purged = 0
  for (const [index, batch] of batches.entries()) {
    if (index > 0 && interval > 0) await sleep(interval)
    const sent = await sendWithRetry(target, batch, io, secrets)
    if (!sent.ok) {
      const missed = batches.slice(index).flat()
      io.err(
        `${target.name}: purge failed (${sent.error}); ${purged} tags purged, ${missed.length} not purged: ${missed.join(' ')}`,
      )
      return false
    }
    purged += batch.length
    io.out(`${target.name}: purged ${batch.length} tag${batch.length === 1 ? '' : 's'}: ${batch.join(' ')}`)
  }
  return true
}

export interface PurgeRequest {
  varnish?: string
  fastly?: string
  cloudflare?: string
  /** Fastly soft purge: objects are marked stale rather than dropped. */
  soft?: boolean
  /** Purge `all` rather than the snapshot's changed tags (after a rollback, say). */
  all?: boolean
  /** jobsnap origins (base URLs) that must serve the published snapshot before anything is purged. */
  waitFor?: string[]
  /** How long to wait for them, seconds (default 120). */
  waitSeconds?: number
}

const ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/

/**
 * Runs `jobsnap purge`; returns the exit code: 0 all purged (or nothing to),
 * 1 a purge failed, 2 nothing could be tried (no target, a bad flag, a
 * missing token, no published snapshot). Every check happens before any request.
 */
export async function runPurge(
  config: Config,
  request: PurgeRequest,
  env: NodeJS.ProcessEnv,
  io: PurgeIo,
): Promise<number> {
  const refuse = (message: string) => {
    io.err(`jobsnap purge: ${message}`)
    return 2
  }
  if (!request.varnish && !request.fastly && !request.cloudflare)
    return refuse('name at least one target: --varnish <url>, --fastly <service_id> or --cloudflare <zone_id>.')
  const targets: PurgeTarget[] = []
  const secrets: string[] = []
  if (request.varnish !== undefined) {
    let url: URL
    try {
      url = new URL(request.varnish)
    } catch {
      return refuse(
        `--varnish must be an http:// or https:// URL such as http://127.0.0.1:6081/; got ${request.varnish}`,
      )
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      return refuse(`--varnish must be an http:// or https:// URL; got ${request.varnish}`)
    targets.push(varnishTarget(url.href))
  }
  if (request.fastly !== undefined) {
    if (!ID_PATTERN.test(request.fastly))
      return refuse(`--fastly must be a Fastly service id (letters, digits, - and _); got ${request.fastly}`)
    const token = env.FASTLY_API_TOKEN ?? ''
    if (!token) return refuse('--fastly needs an API token with purge rights in FASTLY_API_TOKEN; it is not set.')
    secrets.push(token)
    targets.push(fastlyTarget(config, request.fastly, token, request.soft === true))
  } else if (request.soft) return refuse('--soft is a Fastly purge option: give --fastly too.')
  if (request.cloudflare !== undefined) {
    if (!ID_PATTERN.test(request.cloudflare))
      return refuse(`--cloudflare must be a Cloudflare zone id (letters and digits); got ${request.cloudflare}`)
    const token = env.CLOUDFLARE_API_TOKEN ?? ''
    if (!token)
      return refuse('--cloudflare needs an API token with Cache Purge rights in CLOUDFLARE_API_TOKEN; it is not set.')
    secrets.push(token)
    targets.push(cloudflareTarget(config, request.cloudflare, token))
  }

  const origins: string[] = []
  for (const origin of request.waitFor ?? []) {
    if (!URL.canParse(origin) || !/^https?:$/.test(new URL(origin).protocol))
      return refuse(`--wait-for must be a jobsnap origin's http:// or https:// URL; got ${origin}`)
    origins.push(origin)
  }
  const waitSeconds = request.waitSeconds ?? 120
  if (!Number.isFinite(waitSeconds) || waitSeconds < 0)
    return refuse(`--wait-seconds must be a number of seconds, 0 or more; got ${request.waitSeconds}`)

  const snapshotId = await publishedSnapshotId(config.JOBSNAP_DIST)
  if (!snapshotId) return refuse(`no snapshot is published in ${config.JOBSNAP_DIST}: nothing to purge.`)
  let tags: string[]
  if (request.all) tags = [ALL_TAG]
  else {
    const file = path.join(config.JOBSNAP_DIST, CURRENT_LINK, CHANGED_TAGS_FILE)
    let text: string
    try {
      text = await readFile(file, 'utf8')
    } catch {
      return refuse(
        `snapshot ${snapshotId} has no ${CHANGED_TAGS_FILE} (built before cache tags): rebuild, or purge everything with --all.`,
      )
    }
    tags = text.split('\n').filter((line) => line !== '')
    const bad = tags.find((tag) => !isTag(tag))
    if (bad !== undefined)
      return refuse(`${file} holds ${JSON.stringify(bad.slice(0, 100))}, which is not a cache tag.`)
  }
  if (tags.length === 0) {
    io.out(`snapshot ${snapshotId} changed nothing a cache holds: nothing to purge.`)
    return 0
  }
  // Purged before the origins serve the new snapshot, a cache would fetch the old answers again and keep them.
  for (const origin of origins) {
    const { ready, lastSeen } = await waitForOrigin(origin, snapshotId, { timeoutMs: waitSeconds * 1000 })
    if (!ready) {
      io.err(
        `jobsnap purge: ${origin} does not serve snapshot ${snapshotId} after ${waitSeconds} s (${lastSeen ? `it serves ${lastSeen}` : 'no answer from its /ready'}); nothing was purged, since a cache would fetch the old answers again. Purge once it serves the new snapshot.`,
      )
      return 1
    }
    io.err(`${origin} serves snapshot ${snapshotId}`)
  }
  io.err(
    `purging ${tags.length} tag${tags.length === 1 ? '' : 's'} of snapshot ${snapshotId}${request.all ? ' (--all)' : ''} at ${targets.map((t) => t.name).join(', ')}`,
  )
  let failed = 0
  for (const target of targets) if (!(await purgeAt(target, tags, io, secrets))) failed++
  if (failed > 0) {
    io.err(
      `jobsnap purge: ${failed} of ${targets.length} target${targets.length === 1 ? '' : 's'} not fully purged; snapshot ${snapshotId} stays published. Run jobsnap purge again once the target answers.`,
    )
    return 1
  }
  return 0
}
