/**
 * Where the REST and MCP rate buckets live: in Redis when replicas share
 * them, in the cluster's primary when workers do, else in this process. The
 * local limiters always exist: they decide alone, or answer while Redis or
 * the primary does not.
 */
import type { Config } from '../../core/config.ts'
import { PrimaryLimiter, type PrimaryLimitClient } from '../http/primary-limiter.ts'
import { limitersFor, type SlidingWindowLimiter, type TokenBucketLimiter } from '../http/rate-limit.ts'
import {
  type Limiter,
  RedisSlidingWindowLimiter,
  RedisTokenBucketLimiter,
  type SharedLimitStore,
} from '../http/redis-limiter.ts'

export interface RateGates {
  restLimiter: SlidingWindowLimiter
  mcpLimiter: TokenBucketLimiter
  /** What the REST envelope asks: the shared store, the primary, or `restLimiter` itself. */
  restGate: Limiter
  /** What the MCP endpoint asks, likewise. */
  mcpGate: Limiter
}

export function rateGates(
  config: Config,
  sharedLimits?: SharedLimitStore,
  primaryLimits?: PrimaryLimitClient,
): RateGates {
  const { rest: restLimiter, mcp: mcpLimiter } = limitersFor(config)
  const restGate: Limiter = sharedLimits
    ? new RedisSlidingWindowLimiter(sharedLimits, restLimiter)
    : primaryLimits
      ? new PrimaryLimiter(primaryLimits, 'rest', restLimiter)
      : restLimiter
  const mcpGate: Limiter = sharedLimits
    ? new RedisTokenBucketLimiter(sharedLimits, mcpLimiter)
    : primaryLimits
      ? new PrimaryLimiter(primaryLimits, 'mcp', mcpLimiter)
      : mcpLimiter
  return { restLimiter, mcpLimiter, restGate, mcpGate }
}
