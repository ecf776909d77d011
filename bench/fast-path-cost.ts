/**
 * What a single job (or a v1 page) costs the server inside the process,
 * without a socket or a load generator: the whole Node request listener
 * (refusals before routing, the fast path, the limiter, writeHead and end,
 * the request id and metrics) for hand-made requests whose responses go to
 * a sink. CPU time per request, this checkout beside another one with
 * `--compare DIR` (its node_modules installed or linked; `--compare-dist`
 * when it needs a snapshot built by its own code), both in this one
 * process. Rounds take turns; the fastest round of each is printed, the
 * figure least disturbed by other processes on a shared machine, with the
 * bytes written per request (headers and body).
 *
 * On a 2-core machine shared with other work, wrk's req/s for one server
 * moved ±20% between runs of the same code; this moves by a few percent.
 * It leaves out what the kernel and the client spend per response.
 *
 *   npx tsx bench/fast-path-cost.ts [distDir] [--paths jobs|v1] [--encoding gzip]
 *     [--compare DIR] [--compare-dist DIST] [--rounds N] [--requests N]
 */
import { realpathSync } from 'node:fs'
import http, { type IncomingMessage, type ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import path from 'node:path'
import { Writable } from 'node:stream'
import { parseArgs } from 'node:util'
import { loadVocabulary, prng } from './workload.ts'

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    paths: { type: 'string', default: 'jobs' },
    encoding: { type: 'string' },
    compare: { type: 'string' },
    'compare-dist': { type: 'string' },
    rounds: { type: 'string', default: '9' },
    requests: { type: 'string', default: '20000' },
  },
})
const distDir = path.resolve(positionals[0] ?? '.bench/dist-100k')
const here = path.resolve(import.meta.dirname, '..')
const vocabulary = loadVocabulary(realpathSync(path.join(distDir, 'current')))
const random = prng(5)
const paths = Array.from({ length: 5000 }, () =>
  values.paths === 'v1'
    ? `/api/v1?page=${1 + Math.floor(random() * vocabulary.v1Pages)}`
    : `/api/v2/jobs/${vocabulary.slugs[Math.floor(random() * vocabulary.slugs.length)]}`,
)

// The settings the bench serves with (bench/servers.ts): limits out of the way, no logs, no Redis.
Object.assign(process.env, {
  NODE_ENV: 'production',
  JOBSNAP_LOG: 'silent',
  JOBSNAP_REST_LIMIT: '1000000000',
  JOBSNAP_MCP_BURST: '1000000000',
  JOBSNAP_MCP_RATE: '1000000000',
  JOBSNAP_REDIS_URL: '',
  JOBSNAP_TRUST_PROXY: '',
  PORT: '0',
  HOST: '127.0.0.1',
})

/** Counts what is written, as a socket would take it (header strings are not turned into buffers). */
class Sink extends Writable {
  readonly remoteAddress = '127.0.0.1'
  bytes = 0
  constructor() {
    super({ decodeStrings: false })
  }
  override _write(chunk: Buffer | string, _encoding: BufferEncoding, done: () => void): void {
    this.bytes += chunk.length
    done()
  }
  override _writev(chunks: { chunk: Buffer | string }[], done: () => void): void {
    for (const { chunk } of chunks) this.bytes += chunk.length
    done()
  }
}

interface Variant {
  name: string
  listener: (request: IncomingMessage, response: ServerResponse) => void
  Response: typeof ServerResponse
  sink: Sink
  best: number
  bytesPerRequest: number
}

async function variant(name: string, root: string, dist: string): Promise<Variant> {
  // The Node server the checkout's startServer creates, caught as it listens: its listener is what is timed.
  let server: http.Server | undefined
  const listen = http.Server.prototype.listen
  http.Server.prototype.listen = function (this: http.Server, ...args: unknown[]) {
    server = this
    return (listen as (...a: unknown[]) => http.Server).apply(this, args)
  } as typeof listen
  try {
    process.env.JOBSNAP_DIST = dist
    const core = (await import(path.join(root, 'core/index.ts'))) as typeof import('../core/index.ts')
    const runtime = (await import(path.join(root, 'runtime/index.ts'))) as typeof import('../runtime/index.ts')
    await runtime.startServer({ config: core.loadConfig(), watch: false })
  } finally {
    http.Server.prototype.listen = listen
  }
  if (!server) throw new Error(`${root}: startServer created no Node server`)
  const listener = server.listeners('request')[0] as Variant['listener']
  // The ServerResponse class the server was created with (the request observer's), as Node keeps it.
  const kResponse = Object.getOwnPropertySymbols(server).find((symbol) => symbol.description === 'ServerResponse')
  const Response =
    ((kResponse && (server as unknown as Record<symbol, unknown>)[kResponse]) as typeof ServerResponse | undefined) ??
    http.ServerResponse
  return { name, listener, Response, sink: new Sink(), best: Infinity, bytesPerRequest: 0 }
}

const requestHeaders = values.encoding
  ? ['Host', '127.0.0.1:8080', 'Accept-Encoding', values.encoding]
  : ['Host', '127.0.0.1:8080']

/** One request as Node's parser hands it over (HTTP/1.1, wrk's headers), answered into the variant's sink. */
function answer(v: Variant, target: string): Promise<void> | undefined {
  const socket = v.sink as unknown as Socket
  const request = new http.IncomingMessage(socket)
  request.method = 'GET'
  request.url = target
  request.httpVersionMajor = 1
  request.httpVersionMinor = 1
  request.httpVersion = '1.1'
  // Node's parser sets headers this way (they are read lazily from the raw list).
  ;(request as unknown as { _addHeaderLines(headers: string[], n: number): void })._addHeaderLines(
    requestHeaders,
    requestHeaders.length,
  )
  const response = new v.Response(request)
  response.shouldKeepAlive = true
  response.assignSocket(socket)
  const done = () => {
    response.detachSocket(socket)
    response.emit('close')
  }
  v.listener(request, response)
  if (response.writableEnded) {
    done()
    return undefined
  }
  return new Promise((resolve) =>
    response.once('finish', () => {
      done()
      resolve()
    }),
  )
}

const turn = () => new Promise((resolve) => setImmediate(resolve))

async function round(v: Variant, requests: number): Promise<number> {
  const bytesBefore = v.sink.bytes
  const before = process.cpuUsage()
  for (let i = 0; i < requests; i++) {
    const pending = answer(v, paths[i % paths.length]!)
    if (pending) await pending
    // Node's own callbacks (write completions, 'finish') run between batches, as between a socket's reads.
    if (i % 200 === 199) await turn()
  }
  await turn()
  const used = process.cpuUsage(before)
  v.bytesPerRequest = (v.sink.bytes - bytesBefore) / requests
  return (used.user + used.system) / requests
}

const variants = [await variant('this checkout', here, distDir)]
if (values.compare)
  variants.push(
    await variant(
      `compare (${values.compare})`,
      path.resolve(values.compare),
      path.resolve(values['compare-dist'] ?? distDir),
    ),
  )
const requests = Number(values.requests)
for (const v of variants) await round(v, requests)
for (let r = 0; r < Number(values.rounds); r++)
  for (const v of variants) v.best = Math.min(v.best, await round(v, requests))
for (const v of variants)
  console.log(
    `${v.name}: fastest of ${values.rounds} rounds ${v.best.toFixed(2)} us CPU per ${values.paths === 'v1' ? 'v1 page' : 'single job'}${values.encoding ? ` (Accept-Encoding: ${values.encoding})` : ''}, ${v.bytesPerRequest.toFixed(0)} bytes written per request`,
  )
process.exit(0)
