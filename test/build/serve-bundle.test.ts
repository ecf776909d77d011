/**
 * `jobsnap serve` runs from an esbuild bundle of the sources (bin/bundle.mjs): remade when a
 * source changes, reused when none did, and skipped (tsx instead) when it cannot be made.
 * Through real processes: the launcher serves from it, and `--build-if-missing` builds in a
 * process of its own, which a bundled server needs (the build is not in the bundle).
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, describe, expect, it, vi } from 'vitest'
import { serveBundle } from '../../bin/bundle.mjs'
import { freePort } from '../../support/processes.ts'

const REPO = path.resolve(import.meta.dirname, '../..')
const work = mkdtempSync(path.join(tmpdir(), 'jobsnap-bundle-'))
afterAll(() => rmSync(work, { recursive: true, force: true }))

/** The stamp beside a bundle folder: the folder's name without its content hash, .json. */
const stampOf = (bundle: string) =>
  JSON.parse(readFileSync(`${path.dirname(bundle).replace(/-[0-9a-f]{12}$/, '')}.json`, 'utf8')) as {
    dir: string
    inputs: { path: string }[]
  }

/** A fresh import of the bundle (a query defeats the module cache), as a new process would load it. */
const load = async (file: string) =>
  ((await import(`${pathToFileURL(file).href}?${statSync(file).mtimeMs}-${Math.random()}`)) as { answer: string })
    .answer

describe('serveBundle', () => {
  const entry = path.join(work, 'entry.ts')
  const part = path.join(work, 'part.ts')
  const cacheDir = path.join(work, 'cache')

  it('bundles the entry and what it imports, and reuses the bundle while no input changed', async () => {
    writeFileSync(part, `export const word: string = 'first'\n`)
    writeFileSync(entry, `import { word } from './part.ts'\nexport const answer: string = word\n`)
    const file = await serveBundle({ entry, cacheDir })
    expect(file).toBeDefined()
    expect(await load(file!)).toBe('first')
    const stamp = stampOf(file!)
    expect(stamp.dir).toBe(path.basename(path.dirname(file!)))
    expect(stamp.inputs.map((input) => input.path).sort()).toEqual([entry, part].sort())
    const madeAt = statSync(file!).mtimeMs
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(await serveBundle({ entry, cacheDir })).toBe(file)
    expect(statSync(file!).mtimeMs).toBe(madeAt)
  })

  it('bundles again when an imported file changed', async () => {
    const before = await serveBundle({ entry, cacheDir })
    await new Promise((resolve) => setTimeout(resolve, 20))
    writeFileSync(part, `export const word: string = 'second'\n`)
    const after = await serveBundle({ entry, cacheDir })
    expect(after).not.toBe(before)
    expect(await load(after!)).toBe('second')
    // The folder before stays a while, for a server that may be starting from it.
    expect(await load(before!)).toBe('first')
  })

  it('bundles again when an input is gone, and says why it cannot when it cannot', async () => {
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {})
    try {
      unlinkSync(part)
      expect(await serveBundle({ entry, cacheDir })).toBeUndefined()
      expect(errors).toHaveBeenCalledWith(expect.stringMatching(/serving through tsx, could not bundle the server/))
      writeFileSync(part, `export const word: string = 'third'\n`)
      expect(await load((await serveBundle({ entry, cacheDir }))!)).toBe('third')
    } finally {
      errors.mockRestore()
    }
  })
})

const ended = (child: ChildProcess) =>
  new Promise<{ code: number | null; output: string }>((resolve) => {
    let output = ''
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()))
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()))
    child.on('exit', (code) => resolve({ code, output }))
  })

async function untilReady(base: string, child: ChildProcess): Promise<void> {
  for (let waited = 0; ; waited += 100) {
    const status = await fetch(`${base}/ready`).then(
      (response) => response.status,
      () => 0,
    )
    if (status === 200) return
    if (child.exitCode !== null) throw new Error(`the server exited (${child.exitCode}) before it was ready`)
    if (waited > 120_000) throw new Error('the server never became ready')
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

describe('bin/jobsnap.mjs serve, through real processes', () => {
  it('remakes the bundle, builds a missing snapshot in a process of its own, then serves it', async () => {
    // The repository's own bundle: its stamp removed, the start must bundle again (and serve from it).
    const bundle = (await serveBundle())!
    const stampFile = `${path.dirname(bundle).replace(/-[0-9a-f]{12}$/, '')}.json`
    rmSync(stampFile, { force: true })
    const port = await freePort()
    const dist = path.join(work, 'dist-missing')
    const child = spawn(
      process.execPath,
      ['bin/jobsnap.mjs', 'serve', '--build-if-missing', '--port', String(port), '--dist', dist],
      {
        cwd: REPO,
        env: { ...process.env, JOBSNAP_LOG: 'silent', JOBSNAP_DRAIN_MS: '0', JOBSNAP_DATA: path.join(REPO, 'data') },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    )
    const exit = ended(child)
    try {
      const base = `http://127.0.0.1:${port}`
      await untilReady(base, child)
      const stamps = stampOf(bundle)
      expect(stamps.inputs.map((input) => path.relative(REPO, input.path))).toEqual(
        expect.arrayContaining(['cli.ts', 'runtime/server/start-server.ts']),
      )
      expect(stamps.inputs.some((input) => path.relative(REPO, input.path).startsWith('build/'))).toBe(false)
      const jobs = await fetch(`${base}/api/v2/jobs?limit=1`)
      expect(jobs.status).toBe(200)
      expect(((await jobs.json()) as { data: unknown[] }).data).toHaveLength(1)
    } finally {
      child.kill('SIGTERM')
    }
    const { code, output } = await exit
    expect(output).toContain('no snapshot published yet')
    expect(code).toBe(0)
  })

  it('exits with the build when the missing snapshot cannot be built', async () => {
    const empty = path.join(work, 'no-data')
    const child = spawn(
      process.execPath,
      ['bin/jobsnap.mjs', 'serve', '--build-if-missing', '--port', String(await freePort())],
      {
        cwd: REPO,
        env: {
          ...process.env,
          JOBSNAP_LOG: 'silent',
          JOBSNAP_DATA: empty,
          JOBSNAP_DIST: path.join(work, 'dist-never'),
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    )
    const { code, output } = await ended(child)
    expect(code).not.toBe(0)
    expect(output).toContain(empty)
  })
})
