/**
 * Plain node:http clients for the refresh suites: identity encoding (no
 * Accept-Encoding is sent), so a body can be compared byte for byte with a
 * snapshot file, and keep-alive agents so a load run reuses connections the
 * way a busy proxy does.
 */
import { createHash } from 'node:crypto'
import http from 'node:http'

export interface HttpResult {
  status: number
  headers: http.IncomingHttpHeaders
  body: Buffer
}

export function get(
  url: string,
  options: {
    agent?: http.Agent
    headers?: Record<string, string>
    method?: string
    body?: string
    timeoutMs?: number
  } = {},
): Promise<HttpResult> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      url,
      { method: options.method ?? 'GET', agent: options.agent ?? false, headers: options.headers },
      (response) => {
        const chunks: Buffer[] = []
        response.on('data', (chunk: Buffer) => chunks.push(chunk))
        response.once('end', () =>
          resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) }),
        )
        response.once('error', reject)
      },
    )
    request.setTimeout(options.timeoutMs ?? 15_000, () =>
      request.destroy(new Error(`no answer from ${url} within ${options.timeoutMs ?? 15_000} ms`)),
    )
    request.once('error', reject)
    request.end(options.body)
  })
}

export function header(result: HttpResult, name: string): string | undefined {
  const value = result.headers[name.toLowerCase()]
  return Array.isArray(value) ? value.join(', ') : value
}

/** One MCP JSON-RPC ping: the cheapest request that goes through the MCP bucket. */
export function mcpPing(
  base: string,
  options: { agent?: http.Agent; forwardedFor?: string } = {},
): Promise<HttpResult> {
  return get(`${base}/api/mcp`, {
    agent: options.agent,
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
      ...(options.forwardedFor ? { 'x-forwarded-for': options.forwardedFor } : {}),
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
  })
}

interface Sample {
  /** Index of the target in the request plan. */
  target: number
  startedAt: number
  endedAt: number
  status: number
  snapshotId: string | undefined
  /** sha256 of the body; the bytes are in LoadRun.bodies (stored once per distinct body). */
  bodyHash: string | undefined
  error?: string
}

export interface LoadRun {
  samples: Sample[]
  bodies: Map<string, Buffer>
}

export interface LoadTarget {
  url: string
  method?: string
  headers?: Record<string, string>
  body?: string
}

export interface LoadOptions {
  /** Requests in flight at any moment. */
  concurrency: number
  /** Chooses the next request; `n` counts requests started. */
  next(n: number): LoadTarget & { target: number }
  /** Stop starting requests once this returns true (checked before each request). */
  stop(): boolean
  /** Hard bound on the run, whatever `stop` says. */
  maxDurationMs: number
  /** Sees each outcome as it arrives. */
  onSample?(sample: Sample): void
}

/** Fixed-concurrency closed-loop load over keep-alive connections; every request's outcome is returned. */
export async function runLoad(options: LoadOptions): Promise<LoadRun> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.concurrency })
  const samples: Sample[] = []
  const bodies = new Map<string, Buffer>()
  const hardStop = Date.now() + options.maxDurationMs
  let started = 0
  const worker = async () => {
    while (!options.stop() && Date.now() < hardStop) {
      const plan = options.next(started++)
      const startedAt = performance.now()
      try {
        const result = await get(plan.url, {
          agent,
          method: plan.method,
          headers: plan.headers,
          body: plan.body,
          timeoutMs: 20_000,
        })
        const endedAt = performance.now()
        const bodyHash = createHash('sha256').update(result.body).digest('hex')
        if (!bodies.has(bodyHash)) bodies.set(bodyHash, result.body)
        const sample: Sample = {
          target: plan.target,
          startedAt,
          endedAt,
          status: result.status,
          snapshotId: header(result, 'x-snapshot-id'),
          bodyHash,
        }
        samples.push(sample)
        options.onSample?.(sample)
      } catch (error) {
        const sample: Sample = {
          target: plan.target,
          startedAt,
          endedAt: performance.now(),
          status: 0,
          snapshotId: undefined,
          bodyHash: undefined,
          error: (error as Error).message,
        }
        samples.push(sample)
        options.onSample?.(sample)
      }
    }
  }
  try {
    await Promise.all(Array.from({ length: options.concurrency }, worker))
  } finally {
    agent.destroy()
  }
  return { samples, bodies }
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!
}
