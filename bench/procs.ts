/**
 * Child processes of the benchmark: every one is started in its own process
 * group and remembered, so that a normal end, an error, SIGINT or SIGTERM
 * kills exactly the processes this run started (nginx's worker included).
 * Also: waiting for an HTTP server, reading RSS.
 */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import http from 'node:http'
import { LOOPBACK } from '../support/processes.ts'

export interface Child {
  name: string
  proc: ChildProcess
  pid: number
  /** Milliseconds (performance.now()) just before spawn. */
  startedAt: number
  /** The last few kilobytes of stdout and stderr together, for error messages. */
  output(): string
  /** Resolves with the exit code (or a signal name) when the process ends. */
  exited: Promise<number | string>
  isRunning(): boolean
}

const children = new Set<Child>()
const cleanups: (() => void)[] = []

/** Has the watchdog remove `dir` should this process die without cleaning up. */
export function removeOnDeath(dir: string): void {
  tellWatchdog(`d${dir}`)
}

/** Runs `fn` (synchronously) at exit, after the children are killed. */
export function onCleanup(fn: () => void): void {
  cleanups.push(fn)
}

function killGroup(child: Child, signal: NodeJS.Signals): void {
  if (!child.isRunning()) return
  try {
    process.kill(-child.pid, signal)
  } catch {
    try {
      process.kill(child.pid, signal)
    } catch {
      // already gone
    }
  }
}

/** Kills every child still running (SIGKILL: this also runs from the synchronous 'exit' hook). */
export function killAll(): void {
  for (const child of children) killGroup(child, 'SIGKILL')
  children.clear()
  for (const fn of cleanups.splice(0)) {
    try {
      fn()
    } catch {
      // best effort
    }
  }
}

/**
 * A watchdog process that outlives this one by a moment: it is told the
 * process group of every child and, when its stdin closes (this process
 * ended, however: even SIGKILL, which tsx sends a child that does not answer
 * a relayed SIGINT within 60 ms), it kills those groups. It ignores the
 * terminal's signals so that it is still there to do that.
 */
const WATCHDOG = `
const groups = new Set()
const dirs = new Set()
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => {})
let buffered = ''
process.stdin.on('data', (chunk) => {
  buffered += chunk
  const lines = buffered.split('\\n')
  buffered = lines.pop()
  for (const line of lines) {
    const pid = Number(line.slice(1))
    if (line[0] === '+') groups.add(pid)
    else if (line[0] === '-') groups.delete(pid)
    else if (line[0] === 'd') dirs.add(line.slice(1))
  }
})
process.stdin.on('end', () => {
  const kill = (signal) => { for (const pid of groups) { try { process.kill(-pid, signal) } catch {} } }
  kill('SIGTERM')
  setTimeout(() => {
    kill('SIGKILL')
    for (const dir of dirs) { try { require('fs').rmSync(dir, { recursive: true, force: true }) } catch {} }
    process.exit(0)
  }, 2000)
})
`
let watchdog: ChildProcess | undefined

function tellWatchdog(line: string): void {
  watchdog?.stdin?.write(`${line}\n`)
}

let hooked = false
/** Installs the exit, SIGINT, SIGTERM and uncaught-error hooks, and the watchdog, once. */
export function installExitHooks(): void {
  if (hooked) return
  hooked = true
  watchdog = spawn(process.execPath, ['-e', WATCHDOG], { stdio: ['pipe', 'ignore', 'ignore'], detached: true })
  watchdog.unref()
  watchdog.stdin?.on('error', () => {})
  process.on('exit', killAll)
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => {
      process.stderr.write(`\nbench: ${signal}, stopping the servers it started\n`)
      killAll()
      process.exit(signal === 'SIGINT' ? 130 : 143)
    })
  }
}

export function startChild(name: string, command: string, args: string[], options: SpawnOptions = {}): Child {
  const startedAt = performance.now()
  const proc = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], ...options, detached: true })
  if (proc.pid === undefined) throw new Error(`could not start ${name} (${command})`)
  let tail = ''
  const keep = (chunk: Buffer) => {
    tail = (tail + chunk.toString('utf8')).slice(-8192)
  }
  proc.stdout?.on('data', keep)
  proc.stderr?.on('data', keep)
  let running = true
  const exited = new Promise<number | string>((resolve) => {
    proc.once('exit', (code, signal) => {
      running = false
      children.delete(child)
      resolve(code ?? signal ?? 'unknown')
    })
    proc.once('error', (error) => {
      running = false
      children.delete(child)
      tail += `\n${error.message}`
      resolve('spawn-error')
    })
  })
  const child: Child = { name, proc, pid: proc.pid, startedAt, output: () => tail, exited, isRunning: () => running }
  children.add(child)
  tellWatchdog(`+${proc.pid}`)
  void exited.then(() => tellWatchdog(`-${proc.pid}`))
  return child
}

/** Stops one child politely (SIGTERM to its group), then SIGKILL after `graceMs`. */
export async function stopChild(child: Child, graceMs = 3000): Promise<void> {
  if (!child.isRunning()) return
  killGroup(child, 'SIGTERM')
  const timer = setTimeout(() => killGroup(child, 'SIGKILL'), graceMs)
  await child.exited
  clearTimeout(timer)
}

/** Runs a command to completion; rejects with its output tail on a non-zero exit. */
export async function runToEnd(
  name: string,
  command: string,
  args: string[],
  options: SpawnOptions = {},
): Promise<{ output: string; ms: number }> {
  const child = startChild(name, command, args, options)
  let all = ''
  child.proc.stdout?.on('data', (chunk: Buffer) => (all += chunk.toString('utf8')))
  child.proc.stderr?.on('data', (chunk: Buffer) => (all += chunk.toString('utf8')))
  const code = await child.exited
  const ms = performance.now() - child.startedAt
  if (code !== 0) throw new Error(`${name} failed (exit ${code}):\n${child.output()}`)
  return { output: all, ms }
}

/** One GET on a fresh connection: the status code, or undefined when nothing answers. */
export function probe(port: number, path: string, timeoutMs = 2000): Promise<number | undefined> {
  return new Promise((resolve) => {
    const request = http.get({ host: LOOPBACK, port, path, agent: false, timeout: timeoutMs }, (response) => {
      response.resume()
      response.once('end', () => resolve(response.statusCode))
      response.once('error', () => resolve(undefined))
    })
    request.once('timeout', () => request.destroy())
    request.once('error', () => resolve(undefined))
  })
}

/** The header fields of one GET of `path`, as sent (raw names and order), without those Node adds to every response. */
export function responseHeaderFields(port: number, path: string): Promise<[string, string][]> {
  const nodeAdds = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding'])
  return new Promise((resolve, reject) => {
    const request = http.get({ host: LOOPBACK, port, path, agent: false }, (response) => {
      response.resume()
      response.once('end', () => {
        const fields: [string, string][] = []
        for (let i = 0; i < response.rawHeaders.length; i += 2)
          if (!nodeAdds.has(response.rawHeaders[i]!.toLowerCase()))
            fields.push([response.rawHeaders[i]!, response.rawHeaders[i + 1]!])
        resolve(fields)
      })
    })
    request.once('error', reject)
  })
}

/**
 * Polls `path` until `accept(status)`; returns the milliseconds since the
 * child was spawned. Fails early when the child exits.
 */
export async function waitForHttp(
  child: Child,
  port: number,
  path: string,
  options: { timeoutMs: number; accept?: (status: number) => boolean },
): Promise<number> {
  const accept = options.accept ?? ((status: number) => status === 200)
  const deadline = performance.now() + options.timeoutMs
  for (;;) {
    if (!child.isRunning()) throw new Error(`${child.name} exited before it was ready:\n${child.output()}`)
    const status = await probe(port, path, 1000)
    if (status !== undefined && accept(status)) return performance.now() - child.startedAt
    if (performance.now() > deadline)
      throw new Error(
        `${child.name} not ready after ${options.timeoutMs / 1000} s (last status ${status ?? 'none'}):\n${child.output()}`,
      )
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/** VmRSS and VmHWM (peak) of a process, in megabytes, from /proc; undefined where /proc is missing. */
export function memoryOf(pid: number): { rssMb: number; peakMb: number } | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8')
    const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) / 1024
    return { rssMb: field('VmRSS'), peakMb: field('VmHWM') }
  } catch {
    return undefined
  }
}

/**
 * One process's memory split as /proc/<pid>/smaps_rollup counts it, in
 * megabytes: `own` is what no other process can share (RSS minus the file
 * pages mapped: the anonymous heap, buffers and the like), `file` the file
 * pages it maps (the node binary, libraries), which every process running
 * the same binary shares with the others. Pages a process only reads with
 * read(2) (the packed bodies) are in the page cache, in no process's RSS.
 */
export function smapsOf(pid: number): { rssMb: number; ownMb: number; fileMb: number } | undefined {
  try {
    const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8')
    const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(rollup)?.[1] ?? 0) / 1024
    const rssMb = field('Rss')
    const ownMb = field('Anonymous') + field('Shmem')
    return { rssMb, ownMb, fileMb: rssMb - ownMb }
  } catch {
    return undefined
  }
}

/**
 * The process that runs `pid`'s command when `pid` is the launcher that reran it with huge pages
 * (bin/huge-pages.mjs): its child that has the tunable in its environment where `pid` has none
 * and is no cluster worker. Undefined for any other process (one that serves itself, a cluster's
 * primary, which is not rerun: its workers get the tunable from it).
 */
export function rerunOf(pid: number): number | undefined {
  const environ = (id: number) => readFileSync(`/proc/${id}/environ`, 'latin1')
  const hasTunable = (id: number) => environ(id).includes('glibc.malloc.hugetlb=')
  // A cluster's workers have it too, when their primary was not rerun: node:cluster marks them with NODE_UNIQUE_ID.
  const isRerun = (id: number) => hasTunable(id) && !/(^|\0)NODE_UNIQUE_ID=/.test(environ(id))
  try {
    if (hasTunable(pid)) return undefined
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim()
    for (const child of children ? children.split(' ').map(Number) : []) if (isRerun(child)) return child
  } catch {
    // no /proc, or the process is gone
  }
  return undefined
}

const CLOCK_TICKS_PER_SECOND = 100

/** User + system CPU seconds of a process and its descendants (nginx's worker is its master's child); 0 where /proc is missing. */
export function cpuSecondsOf(pid: number): number {
  let total = 0
  const visit = (id: number, depth: number) => {
    try {
      const stat = readFileSync(`/proc/${id}/stat`, 'utf8')
      // Fields after the parenthesised command name: state is field 3, utime 14, stime 15.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      total += (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND
      if (depth > 3) return
      for (const task of readdirSync(`/proc/${id}/task`)) {
        const children = readFileSync(`/proc/${id}/task/${task}/children`, 'utf8').trim()
        for (const child of children ? children.split(' ') : []) visit(Number(child), depth + 1)
      }
    } catch {
      // gone, or no /proc
    }
  }
  visit(pid, 0)
  return total
}
