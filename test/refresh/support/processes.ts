/**
 * Real child processes for the refresh suites: `jobsnap serve` servers,
 * one-shot CLI commands and a private redis-server, each on a port picked
 * free on 127.0.0.1. Every child is registered so a suite's afterAll (and, as
 * a last resort, this process's exit) kills whatever is still running.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { childEnv, freePort, REPO_ROOT } from '../../../support/processes.ts'

const REDIS_SERVER = '/usr/bin/redis-server'

const live = new Set<ChildProcess>()
/** Children leading a process group of their own (ServerProcess `launcher`): killed with their group. */
const groupLeaders = new WeakSet<ChildProcess>()
process.once('exit', () => {
  for (const child of live) killHard(child)
})

function killHard(child: ChildProcess): void {
  if (!groupLeaders.has(child)) child.kill('SIGKILL')
  else
    try {
      process.kill(-child.pid!, 'SIGKILL')
    } catch {
      // the group is gone already
    }
}

export interface LogLine {
  time?: string
  message: string
  [field: string]: unknown
}

interface Watched {
  child: ChildProcess
  output: string[]
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

function watchChild(child: ChildProcess, onLine?: (line: string) => void): Watched {
  live.add(child)
  const output: string[] = []
  const collect = (stream: NodeJS.ReadableStream | null) => {
    let partial = ''
    stream?.setEncoding('utf8')
    stream?.on('data', (chunk: string) => {
      partial += chunk
      const lines = partial.split('\n')
      partial = lines.pop()!
      for (const line of lines) {
        output.push(line)
        onLine?.(line)
      }
    })
  }
  collect(child.stdout)
  collect(child.stderr)
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => {
      live.delete(child)
      resolve({ code, signal })
    })
  })
  return { child, output, exit }
}

async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  try {
    return await Promise.race([
      promise,
      new Promise<never>(
        (_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: no result within ${ms} ms`)), ms)),
      ),
    ])
  } finally {
    clearTimeout(timer)
  }
}

/**
 * A `jobsnap serve` child process: `node --import tsx cli.ts serve`, so signals reach the server itself; or
 * with `launcher`, `bin/jobsnap.mjs serve` as operators start it (rerun with huge pages, or a cluster's
 * primary), in a process group of its own so that signalGroup reaches every process, as systemd's does.
 */
export class ServerProcess {
  readonly logs: LogLine[] = []
  private readonly watched: Watched
  private readonly waiters = new Set<() => void>()

  private constructor(
    readonly url: string,
    readonly port: number,
    child: ChildProcess,
  ) {
    this.watched = watchChild(child, (line) => {
      if (line.startsWith('{')) {
        try {
          this.logs.push(JSON.parse(line) as LogLine)
        } catch {
          // not a log line
        }
      }
      for (const wake of this.waiters) wake()
    })
  }

  static async start(options: {
    distDir: string
    env?: Record<string, string>
    args?: string[]
    launcher?: boolean
  }): Promise<ServerProcess> {
    const port = await freePort()
    const child = spawn(
      process.execPath,
      [
        ...(options.launcher ? ['bin/jobsnap.mjs'] : ['--import', 'tsx', 'cli.ts']),
        'serve',
        '--port',
        String(port),
        '--dist',
        options.distDir,
        ...(options.args ?? []),
      ],
      {
        cwd: REPO_ROOT,
        env: childEnv({ JOBSNAP_LOG: 'json', ...options.env }),
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: options.launcher === true,
      },
    )
    if (options.launcher) groupLeaders.add(child)
    const server = new ServerProcess(`http://127.0.0.1:${port}`, port, child)
    try {
      await server.waitForLog((line) => line.message.startsWith('jobsnap listening on'), 30_000)
    } catch (error) {
      server.kill()
      throw new Error(`${(error as Error).message}\nserver output:\n${server.output.join('\n')}`)
    }
    return server
  }

  get pid(): number {
    return this.watched.child.pid!
  }

  get output(): string[] {
    return this.watched.output
  }

  get exited(): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    return this.watched.exit
  }

  get running(): boolean {
    return this.watched.child.exitCode === null && this.watched.child.signalCode === null
  }

  signal(signal: NodeJS.Signals): void {
    this.watched.child.kill(signal)
  }

  /** `signal` to every process of the group a `launcher` server leads (the launcher, its rerun or workers). */
  signalGroup(signal: NodeJS.Signals): void {
    process.kill(-this.pid, signal)
  }

  /** Resolves with the first log line (already seen or still to come) matching `match`. */
  async waitForLog(match: (line: LogLine) => boolean, timeoutMs: number, from = 0): Promise<LogLine> {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const found = this.logs.slice(from).find(match)
      if (found) return found
      if (!this.running)
        throw new Error(
          `server exited (${this.watched.child.exitCode ?? this.watched.child.signalCode}) while waiting for a log line`,
        )
      const left = deadline - Date.now()
      if (left <= 0)
        throw new Error(`no matching log line within ${timeoutMs} ms; logs:\n${this.output.slice(-20).join('\n')}`)
      await new Promise<void>((resolve) => {
        const wake = () => {
          this.waiters.delete(wake)
          clearTimeout(timer)
          resolve()
        }
        const timer = setTimeout(wake, Math.min(left, 250))
        this.waiters.add(wake)
      })
    }
  }

  kill(): void {
    // A launcher's group may outlive it (its rerun, its workers): killed whether or not it still runs.
    if (this.running || groupLeaders.has(this.watched.child)) killHard(this.watched.child)
  }

  /** SIGKILL and wait until it is gone. */
  async stop(): Promise<void> {
    this.kill()
    await withTimeout(this.exited, 10_000, `server ${this.pid} exit`).catch(() => {})
  }
}

/** A private, memory-only redis-server on 127.0.0.1. */
export class RedisProcess {
  private watched: Watched | undefined

  private constructor(readonly port: number) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`
  }

  static async start(port?: number): Promise<RedisProcess> {
    if (!existsSync(REDIS_SERVER)) {
      throw new Error(
        `${REDIS_SERVER} is missing: these tests need a real Redis. Install it with \`apt-get install redis-server\` (CI's .ci/run does).`,
      )
    }
    const redis = new RedisProcess(port ?? (await freePort()))
    await redis.restart()
    return redis
  }

  get running(): boolean {
    const child = this.watched?.child
    return child !== undefined && child.exitCode === null && child.signalCode === null
  }

  /** Starts redis-server on this port and waits until it accepts connections. */
  async restart(): Promise<void> {
    if (this.running) throw new Error('redis is already running')
    const child = spawn(
      REDIS_SERVER,
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no'],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    )
    const watched = watchChild(child)
    this.watched = watched
    const deadline = Date.now() + 10_000
    while (!watched.output.some((line) => line.includes('Ready to accept connections'))) {
      if (child.exitCode !== null)
        throw new Error(`redis-server exited (${child.exitCode}):\n${watched.output.join('\n')}`)
      if (Date.now() > deadline) throw new Error(`redis-server not ready within 10 s:\n${watched.output.join('\n')}`)
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  }

  /** Stops redis-server (SIGKILL: an outage, not a maintenance window) and waits until it is gone. */
  async stop(): Promise<void> {
    const watched = this.watched
    if (!watched || !this.running) return
    watched.child.kill('SIGKILL')
    await withTimeout(watched.exit, 10_000, 'redis-server exit')
  }
}

/** Kills every child this module started that is still running. */
export async function killAll(): Promise<void> {
  const exits = [...live].map(
    (child) =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve()
        child.once('exit', () => resolve())
        child.kill('SIGKILL')
        setTimeout(resolve, 5000)
      }),
  )
  await Promise.all(exits)
}

export async function sleep(ms: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms))
}

/** Polls `check` until it returns a value other than undefined, or fails after `timeoutMs`. */
export async function eventually<T>(
  check: () => Promise<T | undefined> | T | undefined,
  timeoutMs: number,
  what: string,
): Promise<T> {
  const deadline = Date.now() + timeoutMs
  let lastError: unknown
  for (;;) {
    try {
      const value = await check()
      if (value !== undefined) return value
    } catch (error) {
      lastError = error
    }
    if (Date.now() > deadline)
      throw new Error(
        `${what}: not within ${timeoutMs} ms${lastError ? ` (last error: ${(lastError as Error).message})` : ''}`,
      )
    await sleep(25)
  }
}
