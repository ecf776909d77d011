/**
 * Driving jobsnap from outside, for tests and the benchmark alike: where the
 * repository is, a free loopback port, and the real CLI run as a child process.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import net from 'node:net'
import { fileURLToPath } from 'node:url'

/** The repository root, where `cli.ts` lives: child processes run the real CLI from here. */
export const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url))

/** Every address a test or benchmark listens on or connects to. */
export const LOOPBACK = '127.0.0.1'

/** A TCP port on 127.0.0.1 that nothing listened on a moment ago (the kernel's pick, released at once). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer()
    probe.unref()
    probe.once('error', reject)
    probe.listen(0, LOOPBACK, () => {
      const { port } = probe.address() as net.AddressInfo
      probe.close(() => resolve(port))
    })
  })
}

/**
 * The environment a child gets: this one without any JOBSNAP_* or PORT/HOST
 * setting (a developer's shell must not change what a test sees), plus `extra`.
 */
export function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.startsWith('JOBSNAP_') && key !== 'PORT' && key !== 'HOST') env[key] = value
  }
  return { ...env, NO_COLOR: '1', ...extra }
}

const running = new Set<ChildProcess>()
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL')
})

export interface CliResult {
  /** Exit code, or null when a signal ended the process. */
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
}

/** Runs `node --import tsx cli.ts <args>` from the repository root to completion (SIGKILL after `timeoutMs`). */
export async function runCli(
  args: string[],
  options: { env?: Record<string, string>; timeoutMs?: number } = {},
): Promise<CliResult> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'cli.ts', ...args], {
    cwd: REPO_ROOT,
    env: childEnv({ JOBSNAP_LOG: 'json', ...options.env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  running.add(child)
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk
  })
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk
  })
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 120_000)
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
    child.once('exit', (exitCode, exitSignal) => resolve([exitCode, exitSignal])),
  )
  clearTimeout(timer)
  running.delete(child)
  return { code, signal, stdout, stderr }
}
