/**
 * HTTP load with wrk (Debian's `wrk`), which in one thread sends several
 * times what autocannon can: with it, the nginx and bare-server references
 * are measured rather than the load generator. Paths come from a file the
 * Lua script below cycles through (written here from the same seeded
 * generators the autocannon runs use); wrk's own latency histogram gives the
 * percentiles, in microseconds.
 */
import { spawn, spawnSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import path from 'node:path'
import type { LoadResult } from './load.ts'
import { LOOPBACK } from '../support/processes.ts'

export const WRK_INSTALL = 'apt-get install -y wrk   (Debian/Ubuntu)'

/** The wrk binary, or undefined when it is not installed. */
export function findWrk(): string | undefined {
  const found = spawnSync('sh', ['-c', 'command -v wrk'], { encoding: 'utf8' })
  return found.status === 0 ? found.stdout.trim() : undefined
}

// Reads the paths file once per thread, sends them in order (wrapping), optionally with
// Accept-Encoding, and prints one JSON line of results that the caller parses.
const SCRIPT = `
local paths, n, i = {}, 0, 0
function init(args)
  for line in io.lines(args[1]) do n = n + 1; paths[n] = line end
  if args[2] ~= "" then wrk.headers["Accept-Encoding"] = args[2] end
end
function request()
  i = i % n + 1
  return wrk.format("GET", paths[i])
end
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('JOBSNAP_WRK {"requests":%d,"micros":%d,"errors":%d,"non2xx":%d,"p50":%d,"p99":%d,"max":%d}\\n',
    summary.requests, summary.duration, e.connect + e.read + e.write + e.timeout, e.status,
    latency:percentile(50), latency:percentile(99), latency.max))
end
`

// MCP tools/call requests as an agent's HTTP client sends them to the stateless endpoint: one JSON-RPC
// body per line of the bodies file, POSTed in order (wrapping). A 200 whose body is not a successful
// result (a JSON-RPC error, or a tool result with isError) counts as an error.
const MCP_SCRIPT = `
local bodies, n, i, target = {}, 0, 0, "/"
local threads = {}
function setup(thread) table.insert(threads, thread) end
function init(args)
  for line in io.lines(args[1]) do n = n + 1; bodies[n] = line end
  target = args[2]
  failed = 0
  wrk.headers["Content-Type"] = "application/json"
  wrk.headers["Accept"] = "application/json, text/event-stream"
  wrk.headers["MCP-Protocol-Version"] = args[3]
end
function request()
  i = i % n + 1
  return wrk.format("POST", target, nil, bodies[i])
end
function response(status, headers, body)
  if status == 200 and (not body:find('"result"', 1, true) or body:find('"isError":true', 1, true)) then
    failed = failed + 1
  end
end
function done(summary, latency, requests)
  local e = summary.errors
  local bad = 0
  for _, thread in ipairs(threads) do bad = bad + thread:get("failed") end
  io.write(string.format('JOBSNAP_WRK {"requests":%d,"micros":%d,"errors":%d,"non2xx":%d,"p50":%d,"p99":%d,"max":%d}\\n',
    summary.requests, summary.duration, e.connect + e.read + e.write + e.timeout + bad, e.status,
    latency:percentile(50), latency:percentile(99), latency.max))
end
`

export interface WrkOptions {
  wrk: string
  port: number
  /** The requests, in order; wrk wraps around at the end. */
  paths: readonly string[]
  connections: number
  seconds: number
  /** Sent as Accept-Encoding when given (CDNs send `gzip, br`). */
  acceptEncoding?: string
  workDir: string
}

export interface WrkMcpOptions extends Omit<WrkOptions, 'paths' | 'acceptEncoding'> {
  /** JSON-RPC request bodies (tools/call), one line each, in order; wrk wraps around at the end. */
  bodies: readonly string[]
  /** The MCP endpoint's path. */
  endpoint: string
  /** Sent as MCP-Protocol-Version. */
  protocolVersion: string
}

let runs = 0

export function runWrk(options: WrkOptions): Promise<LoadResult> {
  return spawnWrk(options, SCRIPT, options.paths, [options.acceptEncoding ?? ''])
}

/**
 * MCP tool calls from wrk: what the server sustains when the load generator
 * costs little, unlike the SDK clients (runMcpLoad), which take about a core
 * of this machine's two to send the same calls.
 */
export function runWrkMcp(options: WrkMcpOptions): Promise<LoadResult> {
  return spawnWrk(options, MCP_SCRIPT, options.bodies, [options.endpoint, options.protocolVersion])
}

function spawnWrk(
  options: Omit<WrkOptions, 'paths' | 'acceptEncoding'>,
  script: string,
  lines: readonly string[],
  extraArgs: string[],
): Promise<LoadResult> {
  const run = ++runs
  const scriptFile = path.join(options.workDir, `wrk-script-${run}.lua`)
  const linesFile = path.join(options.workDir, `wrk-lines-${run}.txt`)
  writeFileSync(scriptFile, script)
  writeFileSync(linesFile, `${lines.join('\n')}\n`)
  const args = [
    '-t1',
    `-c${options.connections}`,
    `-d${Math.max(1, Math.round(options.seconds))}s`,
    '--timeout',
    '30s',
    '-s',
    scriptFile,
    `http://${LOOPBACK}:${options.port}`,
    '--',
    linesFile,
    ...extraArgs,
  ]
  return new Promise((resolve, reject) => {
    const child = spawn(options.wrk, args, { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()))
    child.on('error', reject)
    child.on('close', (code) => {
      const line = /JOBSNAP_WRK (\{.*\})/.exec(out)?.[1]
      if (code !== 0 || !line) return reject(new Error(`wrk exited ${code}: ${out.slice(-500)}`))
      const r = JSON.parse(line) as {
        requests: number
        micros: number
        errors: number
        non2xx: number
        p50: number
        p99: number
        max: number
      }
      const seconds = r.micros / 1e6
      resolve({
        requests: r.requests,
        seconds,
        rps: r.requests / seconds,
        p50: r.p50 / 1000,
        p99: r.p99 / 1000,
        max: r.max / 1000,
        errors: r.errors + r.non2xx,
        statuses: r.non2xx ? { 'non-2xx': r.non2xx } : {},
      })
    })
  })
}
