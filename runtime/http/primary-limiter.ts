/**
 * Rate limits held once, in the cluster's primary process, for `jobsnap
 * serve --workers N` without Redis: every worker asks the primary, which
 * owns the only SlidingWindowLimiter and TokenBucketLimiter, so a client's
 * 61st request in a minute is refused whichever worker receives it.
 *
 * Questions go over the cluster's IPC channel, gathered per event-loop turn
 * into one message (one message per request would cost the primary a core
 * at a few thousand requests per second). A primary that does not answer in
 * time is treated as Redis is: the worker falls back to its own limiter
 * (fail open to per-worker limits) and logs it once.
 */
import type { Limiter } from './redis-limiter.ts'
import type { RateDecision, SlidingWindowLimiter, TokenBucketLimiter } from './rate-limit.ts'

export type Bucket = 'rest' | 'mcp'

/** Worker -> primary: the hits of one event-loop turn. */
interface LimitAsk {
  type: 'jobsnap:limits'
  batch: number
  /** A third member `1` asks where the client stands without counting a request (a peek). */
  hits: [bucket: Bucket, client: string, peek?: 1][]
}

/** Primary -> worker: the decisions, in the order asked. */
export interface LimitAnswer {
  type: 'jobsnap:limits'
  batch: number
  decisions: RateDecision[]
}

/** The channel to the primary: `process` in a cluster worker. */
export interface PrimaryChannel {
  send(message: LimitAsk): unknown
  on(event: 'message', listener: (message: unknown) => void): unknown
}

type Log = (message: string, fields?: Record<string, unknown>) => void

interface Pending {
  resolvers: ((decision: RateDecision | undefined) => void)[]
  timer: NodeJS.Timeout
}

/** The worker's side: asks the primary, batching per event-loop turn. */
export class PrimaryLimitClient {
  private queued: { hit: LimitAsk['hits'][number]; resolve: (decision: RateDecision | undefined) => void }[] = []
  private readonly pending = new Map<number, Pending>()
  private batches = 0
  private degraded = false

  constructor(
    private readonly channel: PrimaryChannel,
    private readonly log: Log,
    /** An answer slower than this counts as the primary being unavailable. */
    private readonly timeoutMs = 1000,
  ) {
    channel.on('message', (message) => {
      if (isAnswer(message)) this.answer(message)
    })
  }

  /** The primary's decision (or, with `peek`, its state uncounted), or undefined when it did not answer in time. */
  ask(bucket: Bucket, client: string, peek = false): Promise<RateDecision | undefined> {
    return new Promise((resolve) => {
      if (this.queued.length === 0) setImmediate(() => this.flush())
      this.queued.push({ hit: peek ? [bucket, client, 1] : [bucket, client], resolve })
    })
  }

  private flush(): void {
    const queued = this.queued
    this.queued = []
    const batch = ++this.batches
    const resolvers = queued.map((q) => q.resolve)
    const timer = setTimeout(() => {
      this.pending.delete(batch)
      this.markDegraded(`the primary did not answer within ${this.timeoutMs} ms`)
      for (const resolve of resolvers) resolve(undefined)
    }, this.timeoutMs)
    timer.unref()
    this.pending.set(batch, { resolvers, timer })
    try {
      this.channel.send({ type: 'jobsnap:limits', batch, hits: queued.map((q) => q.hit) })
    } catch (error) {
      clearTimeout(timer)
      this.pending.delete(batch)
      this.markDegraded((error as Error).message)
      for (const resolve of resolvers) resolve(undefined)
    }
  }

  private answer(message: LimitAnswer): void {
    const pending = this.pending.get(message.batch)
    if (!pending) return
    this.pending.delete(message.batch)
    clearTimeout(pending.timer)
    if (this.degraded) {
      this.degraded = false
      this.log('the primary answers again; rate limits are shared by every worker again')
    }
    pending.resolvers.forEach((resolve, i) => {
      resolve(message.decisions[i])
    })
  }

  private markDegraded(reason: string): void {
    if (this.degraded) return
    this.degraded = true
    this.log('the primary is not answering; falling back to per-worker rate limits', { reason })
  }
}

function isAnswer(message: unknown): message is LimitAnswer {
  return (
    typeof message === 'object' &&
    message !== null &&
    (message as LimitAnswer).type === 'jobsnap:limits' &&
    Array.isArray((message as LimitAnswer).decisions)
  )
}

/** A Limiter whose state is the primary's; `fallback` answers while the primary does not. */
export class PrimaryLimiter implements Limiter {
  readonly limit: number

  constructor(
    private readonly client: PrimaryLimitClient,
    private readonly bucket: Bucket,
    private readonly fallback: SlidingWindowLimiter | TokenBucketLimiter,
  ) {
    this.limit = fallback.limit
  }

  async hit(client: string, now: number): Promise<RateDecision> {
    return (await this.client.ask(this.bucket, client)) ?? this.fallback.hit(client, now)
  }

  async peek(client: string, now: number): Promise<RateDecision> {
    return (await this.client.ask(this.bucket, client, true)) ?? this.fallback.peek(client, now)
  }
}

/**
 * The primary's side: answers every worker's questions from one pair of
 * limiters, on the primary's clock (workers' clocks may differ by the time
 * a message takes; one clock keeps the window exact).
 */
export function answerLimitAsks(
  limiters: Record<Bucket, SlidingWindowLimiter | TokenBucketLimiter>,
  message: unknown,
  reply: (answer: LimitAnswer) => void,
): boolean {
  if (!isAsk(message)) return false
  const now = Date.now()
  reply({
    type: 'jobsnap:limits',
    batch: message.batch,
    decisions: message.hits.map(([bucket, client, peek]) =>
      peek === 1 ? limiters[bucket].peek(client, now) : limiters[bucket].hit(client, now),
    ),
  })
  return true
}

function isAsk(message: unknown): message is LimitAsk {
  return (
    typeof message === 'object' &&
    message !== null &&
    (message as LimitAsk).type === 'jobsnap:limits' &&
    Array.isArray((message as LimitAsk).hits)
  )
}
