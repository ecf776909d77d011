/**
 * Slow clients cannot hold connections: headers dribbled a line at a time,
 * a connection that never speaks, a body dribbled a byte at a time, and a
 * client that stops reading a large response are all cut off by the server
 * (timeouts made short through configuration for the test), while a normal
 * client is served promptly next to dozens of them.
 */
import net from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../core/index.ts'
import type { RunningServer } from '../../runtime/index.ts'
import { buildFixture, startFixtureServer, type FixtureSnapshot } from '../support/fixtures.ts'
import { parseResponse, rawGet, targetOf, type Target } from '../../support/raw-http.ts'

const HEADERS_MS = 500
const REQUEST_MS = 1_000
const IDLE_MS = 1_000
/** Deadline plus Node's connection-check interval plus scheduling slack on a busy CI machine. */
const CUT_OFF_WITHIN_MS = 4_000

let fixture: FixtureSnapshot
let server: RunningServer
let target: Target

beforeAll(async () => {
  fixture = await buildFixture({ jobs: 60, companies: 10, seed: 5 })
  server = await startFixtureServer(fixture.distDir, {
    JOBSNAP_HEADERS_TIMEOUT_MS: HEADERS_MS,
    JOBSNAP_REQUEST_TIMEOUT_MS: REQUEST_MS,
    JOBSNAP_IDLE_TIMEOUT_MS: IDLE_MS,
    JOBSNAP_REST_LIMIT: 100_000,
    JOBSNAP_MCP_BURST: 100_000,
  })
  target = targetOf(server.url)
})

afterAll(async () => {
  await server?.close()
  await fixture?.cleanup()
})

interface SlowOutcome {
  /** When the server closed the connection, ms after connecting. */
  closedAfterMs: number
  /** Bytes the client managed to send before that. */
  sent: number
  received: Buffer
}

/**
 * Connects and then sends `chunks` one every `everyMs` (repeating the last
 * forever), until the server closes the connection or `giveUpMs` passes.
 */
function dribble(first: string, next: (n: number) => string, everyMs: number, giveUpMs = 15_000): Promise<SlowOutcome> {
  return new Promise((resolve, reject) => {
    const started = performance.now()
    const socket = net.connect(target.port, '127.0.0.1')
    const received: Buffer[] = []
    let sent = 0
    let n = 0
    let timer: NodeJS.Timeout | undefined
    const send = (text: string) => {
      if (!socket.writable) return
      socket.write(text)
      sent += Buffer.byteLength(text)
    }
    socket.on('connect', () => {
      if (first) send(first)
      timer = setInterval(() => send(next(n++)), everyMs)
    })
    socket.on('data', (chunk: Buffer) => received.push(chunk))
    socket.on('error', () => {})
    socket.on('close', () => {
      clearInterval(timer)
      clearTimeout(giveUp)
      resolve({ closedAfterMs: performance.now() - started, sent, received: Buffer.concat(received) })
    })
    const giveUp = setTimeout(() => {
      clearInterval(timer)
      socket.destroy()
      reject(new Error(`still connected after ${giveUpMs} ms (${sent} bytes sent)`))
    }, giveUpMs)
  })
}

describe('slow clients are cut off', () => {
  it('the shipped defaults: 10 s for headers, 30 s for a request, 30 s of silence', () => {
    const config = loadConfig({})
    expect([
      config.JOBSNAP_HEADERS_TIMEOUT_MS,
      config.JOBSNAP_REQUEST_TIMEOUT_MS,
      config.JOBSNAP_IDLE_TIMEOUT_MS,
    ]).toEqual([10_000, 30_000, 30_000])
  })

  it(`headers dribbled a line every 100 ms: 408 with the error body after about ${HEADERS_MS} ms`, async () => {
    const outcome = await dribble('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n', (n) => `X-Slow-${n}: a\r\n`, 100)
    console.log(
      `[security] header dribbler cut after ${outcome.closedAfterMs.toFixed(0)} ms (deadline ${HEADERS_MS} ms)`,
    )
    expect(outcome.closedAfterMs).toBeGreaterThanOrEqual(HEADERS_MS - 50)
    expect(outcome.closedAfterMs).toBeLessThan(CUT_OFF_WITHIN_MS)
    const res = parseResponse(outcome.received)
    expect(res.status).toBe(408)
    expect(JSON.parse(res.text)).toEqual({ error: { code: 408, message: expect.any(String) } })
    expect(res.headers['x-content-type-options']).toBe('nosniff')
  })

  it('a connection that never sends a byte is closed', async () => {
    const outcome = await dribble('', () => '', 60_000)
    console.log(`[security] silent connection closed after ${outcome.closedAfterMs.toFixed(0)} ms`)
    expect(outcome.closedAfterMs).toBeLessThan(CUT_OFF_WITHIN_MS)
    expect(outcome.sent).toBe(0)
  })

  it(`a body dribbled a byte every 100 ms is cut off after about ${REQUEST_MS} ms`, async () => {
    const outcome = await dribble(
      'POST /api/mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 100000\r\n\r\n',
      () => ' ',
      100,
    )
    console.log(`[security] body dribbler cut after ${outcome.closedAfterMs.toFixed(0)} ms (deadline ${REQUEST_MS} ms)`)
    expect(outcome.closedAfterMs).toBeGreaterThanOrEqual(REQUEST_MS - 50)
    expect(outcome.closedAfterMs).toBeLessThan(CUT_OFF_WITHIN_MS)
    const res = parseResponse(outcome.received)
    if (res.status !== 0) expect(res.status).toBe(408)
  })

  it(`a client that stops reading a large response is disconnected after about ${IDLE_MS} ms of silence`, async () => {
    const asset = await rawGet(target, '/docs/assets/swagger-ui-bundle.js')
    expect(asset.status).toBe(200)
    const size = asset.body.length
    // Enough pipelined requests that the responses cannot all sit in socket buffers.
    const requests = 40
    const outcome = await new Promise<{ received: number; closed: boolean }>((resolve) => {
      const socket = net.connect(target.port, '127.0.0.1')
      let received = 0
      socket.on('connect', () => {
        socket.write(
          'GET /docs/assets/swagger-ui-bundle.js HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept-Encoding: identity\r\n\r\n'.repeat(
            requests,
          ),
        )
        socket.pause()
        // Read nothing for three idle periods, then drain whatever is left.
        setTimeout(() => {
          socket.on('data', (chunk: Buffer) => (received += chunk.length))
          socket.resume()
        }, IDLE_MS * 3)
      })
      socket.on('error', () => {})
      socket.on('close', () => {
        clearTimeout(giveUp)
        resolve({ received, closed: true })
      })
      const giveUp = setTimeout(
        () => {
          socket.destroy()
          resolve({ received, closed: false })
        },
        IDLE_MS * 3 + 10_000,
      )
    })
    console.log(
      `[security] stalled reader: got ${(outcome.received / 1e6).toFixed(1)} MB of ${((requests * size) / 1e6).toFixed(1)} MB before the server hung up`,
    )
    expect(outcome.closed).toBe(true)
    expect(outcome.received).toBeLessThan(requests * size)
  })

  it('fifty slow clients at once do not delay a normal request', async () => {
    const sockets: net.Socket[] = []
    try {
      for (let i = 0; i < 50; i++) {
        const socket = net.connect(target.port, '127.0.0.1', () =>
          socket.write('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n'),
        )
        socket.on('error', () => {})
        sockets.push(socket)
      }
      await new Promise((resolve) => setTimeout(resolve, 100))
      const res = await rawGet(target, '/api/v2/jobs?limit=5')
      expect(res.status).toBe(200)
      expect(res.elapsedMs).toBeLessThan(1_000)
    } finally {
      for (const socket of sockets) socket.destroy()
    }
  })
})
