/**
 * Rate limits shared by every replica through Redis. Two Lua scripts (run
 * atomically by Redis, timed by Redis's own clock so replicas with skewed
 * clocks agree) implement exactly the in-memory semantics: a sliding log for
 * REST (a sorted set per client) and a token bucket for MCP (a hash per
 * client). Chosen over a limiter library because none offers both an exact
 * rolling log with "oldest request leaves the window" resets and a token
 * bucket with the same headers; the scripts are 30 lines.
 *
 * Redis going away must not take the API down: a failed or slow call falls
 * back to the local in-memory limiter (fail open to per-replica limits), logs
 * once, and shared limits resume when ioredis reconnects.
 */
import type { Redis } from 'ioredis'
import {
  peekedBucket,
  type RateDecision,
  type SlidingWindowLimiter,
  secondsUntilNextToken,
  type TokenBucketLimiter,
} from './rate-limit.ts'

/** Redis's own clock in milliseconds, so replicas with skewed clocks agree. */
const REDIS_NOW = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`

const SLIDING_LOG = `
local key, window, limit, member = KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3]
${REDIS_NOW}
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
local count = redis.call('ZCARD', key)
local allowed = 0
if count < limit then
  redis.call('ZADD', key, now, now .. ':' .. member)
  redis.call('PEXPIRE', key, window)
  count = count + 1
  allowed = 1
end
local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
local oldestAt = now
if oldest[2] then oldestAt = tonumber(oldest[2]) end
return {allowed, count, oldestAt + window - now}
`

/** The same log read without counting: how many requests the window holds, and when its oldest leaves. */
const SLIDING_LOG_PEEK = `
local key, window = KEYS[1], tonumber(ARGV[1])
${REDIS_NOW}
local count = redis.call('ZCOUNT', key, now - window + 1, '+inf')
local oldest = redis.call('ZRANGEBYSCORE', key, now - window + 1, '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
local untilLeaves = 0
if oldest[2] then untilLeaves = tonumber(oldest[2]) + window - now end
return {count, untilLeaves}
`

/** A client's bucket refilled up to now (burst when it has none). */
const REFILLED_TOKENS = `local key, burst, rate = KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2])
${REDIS_NOW}
local state = redis.call('HMGET', key, 'tokens', 'at')
local tokens = tonumber(state[1]) or burst
local at = tonumber(state[2]) or now
tokens = math.min(burst, tokens + math.max(0, now - at) / 1000 * rate)`

const TOKEN_BUCKET = `
${REFILLED_TOKENS}
local allowed = 0
if tokens >= 1 then
  tokens = tokens - 1
  allowed = 1
end
redis.call('HSET', key, 'tokens', tostring(tokens), 'at', now)
redis.call('PEXPIRE', key, math.ceil(burst / rate * 1000) + 1000)
return {allowed, tostring(tokens)}
`

/** The same bucket read without taking a token. */
const TOKEN_BUCKET_PEEK = `
${REFILLED_TOKENS}
return tostring(tokens)
`

/** Anything the app can ask for a decision; local limiters answer synchronously, Redis ones asynchronously. */
export interface Limiter {
  readonly limit: number
  hit(client: string, now: number): RateDecision | Promise<RateDecision>
  /** Where the client stands, without counting a request (CORS preflights). */
  peek(client: string, now: number): RateDecision | Promise<RateDecision>
}

type Log = (message: string, fields?: Record<string, unknown>) => void

interface Scripts {
  slidingLog(key: string, windowMs: number, limit: number, member: string): Promise<[number, number, number]>
  slidingLogPeek(key: string, windowMs: number): Promise<[number, number]>
  tokenBucket(key: string, burst: number, rate: number): Promise<[number, string]>
  tokenBucketPeek(key: string, burst: number, rate: number): Promise<string>
}

/** One Redis connection shared by both buckets, with fail-open bookkeeping. */
export class SharedLimitStore {
  readonly redis: Redis & Scripts
  private degraded = false

  /** Connects to `url`. ioredis is imported here, so servers without Redis never load it (~60 ms at start). */
  static async open(url: string, log: Log, timeoutMs?: number): Promise<SharedLimitStore> {
    const { Redis } = await import('ioredis')
    return new SharedLimitStore(Redis, url, log, timeoutMs)
  }

  private constructor(
    RedisClient: typeof Redis,
    url: string,
    private readonly log: Log,
    /** A call slower than this counts as Redis being unavailable. */
    private readonly timeoutMs = 100,
  ) {
    const redis = new RedisClient(url, {
      // Fail fast instead of queueing requests while Redis is down.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      connectTimeout: 1000,
      retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
      lazyConnect: false,
    })
    redis.defineCommand('slidingLog', { numberOfKeys: 1, lua: SLIDING_LOG })
    redis.defineCommand('tokenBucket', { numberOfKeys: 1, lua: TOKEN_BUCKET })
    redis.defineCommand('slidingLogPeek', { numberOfKeys: 1, lua: SLIDING_LOG_PEEK })
    redis.defineCommand('tokenBucketPeek', { numberOfKeys: 1, lua: TOKEN_BUCKET_PEEK })
    redis.on('error', () => {}) // reported through markDegraded, once per outage
    redis.on('ready', () => this.markRecovered())
    this.redis = redis as Redis & Scripts
  }

  /** Resolves once connected, or after `ms` (then requests fall back until Redis appears). */
  async waitUntilReady(ms: number): Promise<boolean> {
    if (this.redis.status === 'ready') return true
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.redis.off('ready', onReady)
        this.markDegraded(`redis not ready after ${ms} ms`)
        resolve(false)
      }, ms)
      const onReady = () => {
        clearTimeout(timer)
        resolve(true)
      }
      this.redis.once('ready', onReady)
    })
  }

  /** Runs a Redis call, or returns undefined (after logging once) when Redis is unavailable. */
  async attempt<T>(call: () => Promise<T>): Promise<T | undefined> {
    if (this.redis.status !== 'ready') {
      this.markDegraded(`redis ${this.redis.status}`)
      return undefined
    }
    let timer: NodeJS.Timeout | undefined
    try {
      const result = await Promise.race([
        call(),
        new Promise<never>((_, reject) => {
          // Timers run before the poll phase: after an event-loop stall (a burst of requests, a
          // snapshot load) the timer would fire before an answer already waiting on the socket is
          // read. setImmediate runs after the poll phase, so only a real non-answer times out.
          timer = setTimeout(
            () => setImmediate(() => reject(new Error(`redis did not answer within ${this.timeoutMs} ms`))),
            this.timeoutMs,
          )
        }),
      ])
      this.markRecovered()
      return result
    } catch (error) {
      this.markDegraded((error as Error).message)
      return undefined
    } finally {
      clearTimeout(timer)
    }
  }

  /** An answer after an outage (or a reconnect): shared limits again, logged once. */
  private markRecovered(): void {
    if (!this.degraded) return
    this.degraded = false
    this.log('redis is back; rate limits are shared again')
  }

  private markDegraded(reason: string): void {
    if (this.degraded) return
    this.degraded = true
    this.log('redis unavailable; falling back to per-replica rate limits', { reason })
  }

  async close(): Promise<void> {
    this.redis.disconnect()
  }
}

let sequence = 0

/** REST sliding log in Redis; the in-memory limiter answers while Redis is away. */
export class RedisSlidingWindowLimiter implements Limiter {
  readonly limit: number
  constructor(
    private readonly store: SharedLimitStore,
    private readonly fallback: SlidingWindowLimiter,
    private readonly prefix = 'jobsnap:rest:',
  ) {
    this.limit = fallback.limit
  }

  async hit(client: string, now: number): Promise<RateDecision> {
    const member = `${process.pid}:${++sequence}`
    const reply = await this.store.attempt(() =>
      this.store.redis.slidingLog(this.prefix + client, this.fallback.windowMs, this.limit, member),
    )
    if (!reply) return this.fallback.hit(client, now)
    const [allowed, count, untilOldestLeavesMs] = reply
    return {
      allowed: allowed === 1,
      limit: this.limit,
      remaining: Math.max(0, this.limit - count),
      resetSeconds: Math.max(1, Math.ceil(untilOldestLeavesMs / 1000)),
    }
  }

  async peek(client: string, now: number): Promise<RateDecision> {
    const reply = await this.store.attempt(() =>
      this.store.redis.slidingLogPeek(this.prefix + client, this.fallback.windowMs),
    )
    if (!reply) return this.fallback.peek(client, now)
    const [count, untilOldestLeavesMs] = reply
    return {
      allowed: count < this.limit,
      limit: this.limit,
      remaining: Math.max(0, this.limit - count),
      resetSeconds: count > 0 ? Math.max(1, Math.ceil(untilOldestLeavesMs / 1000)) : 0,
    }
  }
}

/** MCP token bucket in Redis; the in-memory bucket answers while Redis is away. */
export class RedisTokenBucketLimiter implements Limiter {
  readonly limit: number
  constructor(
    private readonly store: SharedLimitStore,
    private readonly fallback: TokenBucketLimiter,
    private readonly prefix = 'jobsnap:mcp:',
  ) {
    this.limit = fallback.burst
  }

  async hit(client: string, now: number): Promise<RateDecision> {
    const { burst, ratePerSecond } = this.fallback
    const reply = await this.store.attempt(() =>
      this.store.redis.tokenBucket(this.prefix + client, burst, ratePerSecond),
    )
    if (!reply) return this.fallback.hit(client, now)
    const [allowed, tokensText] = reply
    const tokens = Number(tokensText)
    return allowed === 1
      ? {
          allowed: true,
          limit: burst,
          remaining: Math.floor(tokens),
          resetSeconds: secondsUntilNextToken(tokens, ratePerSecond),
        }
      : {
          allowed: false,
          limit: burst,
          remaining: 0,
          resetSeconds: secondsUntilNextToken(tokens, ratePerSecond),
        }
  }

  async peek(client: string, now: number): Promise<RateDecision> {
    const { burst, ratePerSecond } = this.fallback
    const reply = await this.store.attempt(() =>
      this.store.redis.tokenBucketPeek(this.prefix + client, burst, ratePerSecond),
    )
    return reply === undefined ? this.fallback.peek(client, now) : peekedBucket(Number(reply), burst, ratePerSecond)
  }
}
