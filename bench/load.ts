/**
 * HTTP load with autocannon as a library: keep-alive connections on
 * loopback, a fixed number of them for a fixed duration, each request's path
 * drawn from a generator. Latencies are recorded from autocannon's
 * per-response event with sub-millisecond precision (its own histogram rounds
 * to whole milliseconds, which hides everything that matters for static files).
 */
import autocannon from 'autocannon'
import { LOOPBACK } from '../support/processes.ts'

export interface LoadResult {
  requests: number
  seconds: number
  rps: number
  p50: number
  p99: number
  max: number
  /** Connection errors, timeouts and non-2xx responses. */
  errors: number
  /** Non-2xx status codes seen, with counts. */
  statuses: Record<string, number>
  /** CPU used during the run, in cores (1 = one core busy all the time): the server's and this process's (the load generator's). */
  cpu?: { server: number; generator: number }
}

/** Grows as needed; holds latencies in milliseconds. */
export class LatencyRecorder {
  private values = new Float64Array(1 << 16)
  count = 0
  add(ms: number): void {
    if (this.count === this.values.length) {
      const bigger = new Float64Array(this.values.length * 2)
      bigger.set(this.values)
      this.values = bigger
    }
    this.values[this.count++] = ms
  }
  summary(): { p50: number; p99: number; max: number } {
    if (this.count === 0) return { p50: NaN, p99: NaN, max: NaN }
    const sorted = this.values.slice(0, this.count).sort()
    const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!
    return { p50: at(0.5), p99: at(0.99), max: sorted[sorted.length - 1]! }
  }
}

export interface LoadOptions {
  port: number
  /** Called once per request for its path (with query string). */
  nextPath: () => string
  connections: number
  seconds: number
  /** Per-request timeout, seconds (a slow reference server must not count as failing). */
  timeoutSeconds?: number
  /** Request headers sent with every request (e.g. Accept-Encoding). */
  headers?: Record<string, string>
}

export function runLoad(options: LoadOptions): Promise<LoadResult> {
  const recorder = new LatencyRecorder()
  const statuses: Record<string, number> = {}
  let non2xx = 0
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: `http://${LOOPBACK}:${options.port}`,
        connections: options.connections,
        duration: options.seconds,
        timeout: options.timeoutSeconds ?? 30,
        pipelining: 1,
        headers: options.headers,
        requests: [
          {
            method: 'GET',
            setupRequest: (request) => {
              request.path = options.nextPath()
              return request
            },
          },
        ],
      },
      (error: unknown, result: autocannon.Result) => {
        if (error) return reject(error instanceof Error ? error : new Error(String(error)))
        const { p50, p99, max } = recorder.summary()
        const seconds = result.duration
        resolve({
          requests: recorder.count,
          seconds,
          rps: recorder.count / seconds,
          p50,
          p99,
          max,
          errors: result.errors + non2xx,
          statuses,
        })
      },
    )
    instance.on('response', (_client: unknown, statusCode: number, _bytes: number, responseTime: number) => {
      recorder.add(responseTime)
      if (statusCode < 200 || statusCode > 299) {
        non2xx++
        statuses[statusCode] = (statuses[statusCode] ?? 0) + 1
      }
    })
  })
}
