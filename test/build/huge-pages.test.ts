/**
 * `jobsnap build` reruns itself with glibc's huge-pages tunable (bin/huge-pages.mjs): which
 * commands and settings rerun, and, through real processes, that the rerun gets the setting,
 * the caller gets its exit code, and a signal sent to the first process reaches the build; and
 * that a cluster's primary is not rerun, its workers starting with the setting.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { HUGE_PAGES_TUNABLE, hugePagesRerunEnv, workersAsked } from '../../bin/huge-pages.mjs'
import { freePort } from '../../support/processes.ts'

const REPO = path.resolve(import.meta.dirname, '../..')
const work = mkdtempSync(path.join(tmpdir(), 'jobsnap-huge-pages-'))
afterAll(() => rmSync(work, { recursive: true, force: true }))

describe('which runs are rerun with huge pages', () => {
  it('reruns build, serve and generate on Linux, adding the tunable to any already set', () => {
    expect(hugePagesRerunEnv(['build', '--data', 'x'], {}, 'linux')?.GLIBC_TUNABLES).toBe(HUGE_PAGES_TUNABLE)
    expect(hugePagesRerunEnv(['serve', '--workers', '2'], {}, 'linux')?.GLIBC_TUNABLES).toBe(HUGE_PAGES_TUNABLE)
    expect(hugePagesRerunEnv(['generate'], {}, 'linux')?.GLIBC_TUNABLES).toBe(HUGE_PAGES_TUNABLE)
    expect(hugePagesRerunEnv(['--quiet', 'build'], {}, 'linux')?.GLIBC_TUNABLES).toBe(HUGE_PAGES_TUNABLE)
    expect(hugePagesRerunEnv(['build'], { GLIBC_TUNABLES: 'glibc.malloc.arena_max=2', PATH: '/bin' }, 'linux')).toEqual(
      { GLIBC_TUNABLES: `glibc.malloc.arena_max=2:${HUGE_PAGES_TUNABLE}`, PATH: '/bin' },
    )
  })

  it('runs everything else in the one process', () => {
    expect(hugePagesRerunEnv(['rollback'], {}, 'linux')).toBeUndefined()
    expect(hugePagesRerunEnv(['purge', '--all'], {}, 'linux')).toBeUndefined()
    expect(hugePagesRerunEnv([], {}, 'linux')).toBeUndefined()
    expect(hugePagesRerunEnv(['build'], {}, 'darwin')).toBeUndefined()
    // Already set, either way: the rerun itself, or a caller that chose.
    expect(hugePagesRerunEnv(['build'], { GLIBC_TUNABLES: HUGE_PAGES_TUNABLE }, 'linux')).toBeUndefined()
    expect(hugePagesRerunEnv(['build'], { GLIBC_TUNABLES: 'glibc.malloc.hugetlb=0' }, 'linux')).toBeUndefined()
    for (const off of ['false', '0', 'no', 'OFF', 'disabled'])
      expect(hugePagesRerunEnv(['build'], { JOBSNAP_HUGE_PAGES: off }, 'linux')).toBeUndefined()
    expect(hugePagesRerunEnv(['build'], { JOBSNAP_HUGE_PAGES: 'true' }, 'linux')).toBeDefined()
  })

  it('reads the workers a serve asks for as the CLI does: the flag, either spelling, over JOBSNAP_WORKERS', () => {
    expect(workersAsked(['serve', '--workers', '2'], {})).toBe(2)
    expect(workersAsked(['serve', '--workers=3', '--port', '1'], {})).toBe(3)
    expect(workersAsked(['serve'], { JOBSNAP_WORKERS: '2' })).toBe(2)
    expect(workersAsked(['serve', '--workers', '1'], { JOBSNAP_WORKERS: '4' })).toBe(1)
    // What it cannot read counts as one process (rerun as before); the CLI then says what is wrong.
    for (const bad of [
      ['serve', '--workers'],
      ['serve', '--workers', 'two'],
      ['serve', '--workers=2.5'],
    ])
      expect(workersAsked(bad, {})).toBe(1)
    expect(workersAsked(['serve'], {})).toBe(1)
  })
})

/**
 * Starts `node --import <probe> bin/jobsnap.mjs ...args`: the probe runs first in every Node process
 * the command starts with those flags (the rerun keeps them), and appends a line with its pid and
 * GLIBC_TUNABLES to `log`.
 */
function startLauncher(args: string[], log: string, env: NodeJS.ProcessEnv = {}): ChildProcess {
  const probe = path.join(work, 'probe.mjs')
  writeFileSync(
    probe,
    `import { appendFileSync } from 'node:fs'\nappendFileSync(${JSON.stringify(log)}, JSON.stringify({ pid: process.pid, tunables: process.env.GLIBC_TUNABLES ?? null }) + '\\n')\n`,
  )
  const { GLIBC_TUNABLES: _, ...rest } = process.env
  return spawn(process.execPath, ['--import', probe, 'bin/jobsnap.mjs', ...args], {
    cwd: REPO,
    env: { ...rest, JOBSNAP_LOG: 'silent', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
}

const ended = (child: ChildProcess) =>
  new Promise<{ code: number | null; signal: NodeJS.Signals | null; output: string }>((resolve) => {
    let output = ''
    const collect = (chunk: Buffer) => {
      output += chunk.toString()
    }
    child.stdout?.on('data', collect)
    child.stderr?.on('data', collect)
    child.on('exit', (code, signal) => resolve({ code, signal, output }))
  })

const probed = (log: string): { pid: number; tunables: string | null }[] =>
  readFileSync(log, 'utf8')
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { pid: number; tunables: string | null })

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

describe.runIf(process.platform === 'linux')('bin/jobsnap.mjs, through real processes', () => {
  it('runs the build in a second process with the tunable, and exits with its code', async () => {
    const log = path.join(work, 'refused.log')
    // A flag build does not take: the build refuses it (exit 2), in the rerun.
    const child = startLauncher(['build', '--bogus-flag'], log)
    const { code, output } = await ended(child)
    expect(code).toBe(2)
    expect(output).toContain('--bogus-flag')
    const processes = probed(log)
    expect(processes).toHaveLength(2)
    expect(processes[0]).toEqual({ pid: child.pid, tunables: null })
    expect(processes[1]!.tunables).toBe(HUGE_PAGES_TUNABLE)
  })

  it('builds in the one process when JOBSNAP_HUGE_PAGES is false', async () => {
    const log = path.join(work, 'off.log')
    const { code } = await ended(startLauncher(['build', '--bogus-flag'], log, { JOBSNAP_HUGE_PAGES: 'false' }))
    expect(code).toBe(2)
    expect(probed(log)).toEqual([expect.objectContaining({ tunables: null })])
  })

  it('passes SIGTERM on to the build and dies of it', async () => {
    const log = path.join(work, 'signal.log')
    const out = path.join(work, 'dist-signal')
    const child = startLauncher(['build', '--data', path.join(REPO, 'data'), '--out', out, '--quiet'], log)
    const exit = ended(child)
    // Until the rerun has started (its probe line is the second).
    for (let waited = 0; probedCount(log) < 2; waited += 50) {
      if (waited > 30_000) throw new Error('the rerun did not start')
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    const build = probed(log)[1]!.pid
    child.kill('SIGTERM')
    const { code, signal } = await exit
    expect({ code, signal }).toEqual({ code: null, signal: 'SIGTERM' })
    for (let waited = 0; alive(build); waited += 50) {
      if (waited > 10_000) throw new Error(`the build (pid ${build}) outlived the SIGTERM sent to its launcher`)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  })

  const dist = path.join(work, 'dist-serve')
  let built = false
  /** The sample data built into `dist` once, for the serve tests. */
  const servable = () => {
    if (built) return
    const run = spawnSync(
      process.execPath,
      ['--import', 'tsx', 'cli.ts', 'build', '--data', path.join(REPO, 'data'), '--out', dist, '--quiet'],
      { cwd: REPO, env: { ...process.env, JOBSNAP_LOG: 'silent' }, encoding: 'utf8' },
    )
    expect(run.status, run.stderr).toBe(0)
    built = true
  }

  it.each([
    ['SIGTERM', 'drains and stops'],
    ['SIGINT', 'closes and stops'],
  ] as const)(
    'serves from the rerun, on the port it was given; %s to the launcher reaches it, and it %s',
    async (stop, _outcome) => {
      servable()
      const port = await freePort()
      const log = path.join(work, `serve-${stop}.log`)
      const child = startLauncher(['serve', '--port', String(port), '--dist', dist], log, { JOBSNAP_DRAIN_MS: '0' })
      const exit = ended(child)
      const base = `http://127.0.0.1:${port}`
      for (let waited = 0; ; waited += 100) {
        const ready = await fetch(`${base}/ready`).then(
          (response) => response.status,
          () => 0,
        )
        if (ready === 200) break
        if (waited > 60_000) throw new Error('the server never became ready')
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
      const processes = probed(log)
      expect(processes).toHaveLength(2)
      expect(processes[0]).toEqual({ pid: child.pid, tunables: null })
      expect(processes[1]!.tunables).toBe(HUGE_PAGES_TUNABLE)
      const jobs = await fetch(`${base}/api/v2/jobs?limit=1`)
      expect(jobs.status).toBe(200)
      expect(((await jobs.json()) as { data: unknown[] }).data).toHaveLength(1)
      child.kill(stop)
      const { code, signal } = await exit
      expect({ code, signal }).toEqual({ code: 0, signal: null })
      const server = processes[1]!.pid
      for (let waited = 0; alive(server); waited += 50) {
        if (waited > 10_000) throw new Error(`the server (pid ${server}) outlived its launcher`)
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    },
  )
})

describe.runIf(process.platform === 'linux')('bin/jobsnap.mjs serve --workers 2, through real processes', () => {
  it.each([
    ['--workers 2', ['--workers', '2'], {}],
    ['JOBSNAP_WORKERS=2', [], { JOBSNAP_WORKERS: '2' }],
  ] as const)(
    'with %s, runs the primary in the first process and forks workers that have the tunable',
    async (_name, flags, env) => {
      const dist = path.join(work, 'dist-cluster')
      const run = spawnSync(
        process.execPath,
        ['--import', 'tsx', 'cli.ts', 'build', '--data', path.join(REPO, 'data'), '--out', dist, '--quiet'],
        { cwd: REPO, env: { ...process.env, JOBSNAP_LOG: 'silent' }, encoding: 'utf8' },
      )
      expect(run.status, run.stderr).toBe(0)
      const port = await freePort()
      const log = path.join(work, `cluster-${flags.length}.log`)
      const child = startLauncher(['serve', '--port', String(port), '--dist', dist, ...flags], log, {
        JOBSNAP_DRAIN_MS: '0',
        ...env,
      })
      const exit = ended(child)
      for (let waited = 0; ; waited += 100) {
        const ready = await fetch(`http://127.0.0.1:${port}/ready`).then(
          (response) => response.status,
          () => 0,
        )
        if (ready === 200 && probedCount(log) >= 3) break
        if (waited > 60_000) throw new Error('the cluster never became ready')
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
      const processes = probed(log)
      expect(processes).toHaveLength(3)
      expect(processes[0]).toEqual({ pid: child.pid, tunables: null })
      for (const worker of processes.slice(1)) expect(worker.tunables).toBe(HUGE_PAGES_TUNABLE)
      child.kill('SIGTERM')
      const { code, signal } = await exit
      expect({ code, signal }).toEqual({ code: 0, signal: null })
    },
  )
})

function probedCount(log: string): number {
  try {
    return probed(log).length
  } catch {
    return 0
  }
}
