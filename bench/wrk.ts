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

let runs = 0

export function runWrk(options: WrkOptions): Promise<LoadResult> {
  const run = ++runs
  const scriptFile = path.join(options.workDir, 'wrk-paths.lua')
  const pathsFile = path.join(options.workDir, `wrk-paths-${run}.txt`)
  writeFileSync(scriptFile, SCRIPT)
  writeFileSync(pathsFile, `${options.paths.join('\n')}\n`)
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
    pathsFile,
    options.acceptEncoding ?? '',
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
