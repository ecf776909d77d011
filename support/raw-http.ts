/**
 * Raw HTTP/1.1 over node:net, for requests that fetch/URL would "fix" before
 * sending (dot segments collapsed, percent-encoding normalised, bytes that
 * are not valid URL characters re-encoded). The request line goes out byte
 * for byte; the response is read until the server closes the connection.
 */
import net from 'node:net'

export interface RawResponse {
  /** 0 when the server closed the connection without answering. */
  status: number
  /** Lower-cased header names; repeated headers joined with ", ". */
  headers: Record<string, string>
  /** Header names exactly as received, in order (to catch duplicates). */
  headerNames: string[]
  /** Decoded body (chunked transfer undone). */
  body: Buffer
  text: string
  /** Everything received, status line included. */
  raw: Buffer
  elapsedMs: number
}

export interface Target {
  port: number
  host?: string
  /** Source address for the client socket (127.0.0.x gives distinct IPv4 peers on Linux loopback). */
  localAddress?: string
}

export function targetOf(serverUrl: string): Target {
  const url = new URL(serverUrl)
  return { port: Number(url.port), host: url.hostname.replace(/^\[|\]$/g, '') }
}

function dechunk(body: Buffer): Buffer {
  const parts: Buffer[] = []
  let offset = 0
  for (let guard = 0; guard < 1_000_000; guard++) {
    const lineEnd = body.indexOf('\r\n', offset)
    if (lineEnd < 0) break
    const size = Number.parseInt(body.subarray(offset, lineEnd).toString('latin1').split(';')[0]!.trim(), 16)
    if (!Number.isFinite(size) || size === 0) break
    parts.push(body.subarray(lineEnd + 2, lineEnd + 2 + size))
    offset = lineEnd + 2 + size + 2
  }
  return Buffer.concat(parts)
}

export function parseResponse(raw: Buffer, elapsedMs = 0): RawResponse {
  const headEnd = raw.indexOf('\r\n\r\n')
  if (headEnd < 0) return { status: 0, headers: {}, headerNames: [], body: Buffer.alloc(0), text: '', raw, elapsedMs }
  const lines = raw.subarray(0, headEnd).toString('latin1').split('\r\n')
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '')?.[1] ?? 0)
  const headers: Record<string, string> = {}
  const headerNames: string[] = []
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':')
    if (colon < 0) continue
    const name = line.slice(0, colon).trim()
    const value = line.slice(colon + 1).trim()
    headerNames.push(name)
    const key = name.toLowerCase()
    headers[key] = headers[key] === undefined ? value : `${headers[key]}, ${value}`
  }
  let body = raw.subarray(headEnd + 4)
  if (headers['transfer-encoding']?.toLowerCase().includes('chunked')) body = dechunk(body)
  else if (headers['content-length'] !== undefined) body = body.subarray(0, Number(headers['content-length']))
  return { status, headers, headerNames, body, text: body.toString('utf8'), raw, elapsedMs }
}

/**
 * Writes `request` as is and collects the answer until the server closes
 * (send `Connection: close`). The client never half-closes: Node's server
 * would take an early FIN as the end of the exchange.
 */
export function rawExchange(target: Target, request: string | Buffer, timeoutMs = 10_000): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const started = performance.now()
    const chunks: Buffer[] = []
    const socket = net.connect({
      port: target.port,
      host: target.host ?? '127.0.0.1',
      localAddress: target.localAddress,
    })
    let settled = false
    const finish = () => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      resolve(parseResponse(Buffer.concat(chunks), performance.now() - started))
    }
    const timer = setTimeout(() => {
      settled = true
      socket.destroy()
      reject(new Error(`no complete answer within ${timeoutMs} ms to ${JSON.stringify(String(request).slice(0, 120))}`))
    }, timeoutMs)
    socket.on('connect', () => socket.write(request))
    socket.on('data', (chunk: Buffer) => chunks.push(chunk))
    socket.on('close', finish)
    // A reset after the answer arrived (the server closing with unread request bytes) is still an answer.
    socket.on('error', (error) => {
      if (chunks.length > 0) return finish()
      if (settled) return
      settled = true
      clearTimeout(timer)
      reject(error)
    })
  })
}

/** `GET <path>` exactly as given, with a Host header and Connection: close. */
export function rawGet(
  target: Target,
  path: string,
  headers: Record<string, string> = {},
  method = 'GET',
): Promise<RawResponse> {
  const all: Record<string, string> = { host: `127.0.0.1:${target.port}`, connection: 'close', ...headers }
  const head = Object.entries(all)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('')
  return rawExchange(target, `${method} ${path} HTTP/1.1\r\n${head}\r\n`)
}

/** A POST with a body, every header as given (a header set to '' is left out). */
export function rawPost(
  target: Target,
  path: string,
  body: string | Buffer,
  headers: Record<string, string> = {},
): Promise<RawResponse> {
  const bytes = Buffer.isBuffer(body) ? body : Buffer.from(body)
  const all: Record<string, string> = {
    host: `127.0.0.1:${target.port}`,
    'content-length': String(bytes.length),
    connection: 'close',
    ...headers,
  }
  const head = Object.entries(all)
    .filter(([, value]) => value !== '')
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('')
  return rawExchange(target, Buffer.concat([Buffer.from(`POST ${path} HTTP/1.1\r\n${head}\r\n`), bytes]))
}

/** Runs `tasks` with at most `width` in flight; results in input order. */
export async function inBatches<T, R>(
  items: readonly T[],
  width: number,
  task: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(items.length)
  let next = 0
  const worker = async () => {
    while (next < items.length) {
      const index = next++
      results[index] = await task(items[index]!, index)
    }
  }
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, worker))
  return results
}

/** Pipelined HTTP/1.1 responses with Content-Length bodies, in order. */
function splitResponses(bytes: Buffer): RawResponse[] {
  const responses: RawResponse[] = []
  let offset = 0
  for (;;) {
    const headEnd = bytes.indexOf('\r\n\r\n', offset)
    if (headEnd < 0) break
    const length = Number(/\r\ncontent-length: *(\d+)/i.exec(bytes.subarray(offset, headEnd).toString('latin1'))?.[1])
    if (!Number.isFinite(length) || headEnd + 4 + length > bytes.length) break
    responses.push(parseResponse(bytes.subarray(offset, headEnd + 4 + length)))
    offset = headEnd + 4 + length
  }
  return responses
}

/**
 * A slow reader: pipelines GETs of `paths` on one connection to `port` and
 * reads nothing until `readAll()`, which then reads every response. For
 * checks that bytes a server is still sending are never changed meanwhile.
 */
export async function slowPipelinedClient(
  port: number,
  paths: readonly string[],
): Promise<{ readAll(): Promise<RawResponse[]> }> {
  const socket = net.connect(port, '127.0.0.1')
  await new Promise<void>((resolve) => socket.once('connect', resolve))
  socket.pause()
  const received: Buffer[] = []
  socket.on('data', (chunk: Buffer) => received.push(chunk))
  socket.write(paths.map((path) => `GET ${path} HTTP/1.1\r\nHost: test\r\n\r\n`).join(''))
  return {
    async readAll() {
      socket.resume()
      const all = await new Promise<Buffer>((resolve, reject) => {
        const done = () => {
          const bytes = Buffer.concat(received)
          if (splitResponses(bytes).length >= paths.length) resolve(bytes)
        }
        socket.on('data', done)
        socket.once('error', reject)
        done()
      })
      socket.destroy()
      return splitResponses(all)
    },
  }
}
