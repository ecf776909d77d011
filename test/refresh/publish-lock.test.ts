/**
 * One publisher at a time per dist folder: two builds (or a build and a
 * rollback) running into the same folder race on `current`, the change list
 * and pruning. The second is refused with the first one's pid; a lock left
 * by a killed build is taken over. And the command line refuses arguments it
 * does not take, rather than running on the wrong folder.
 */
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { cp, mkdir, readdir, readlink, rm, stat, utimes, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { rollbackSnapshot } from '../../build/index.ts'
import { CURRENT_LINK, SNAPSHOTS_DIR } from '../../core/index.ts'
import { runCli } from '../../support/processes.ts'
import { build, createDataset, type RefreshDataset } from './support/dataset.ts'

let dataset: RefreshDataset
const LOCK = '.publish.lock'
const HISTORY = 'publish-history.txt'

beforeAll(async () => {
  dataset = await createDataset({ prefix: 'publish-lock', jobs: 200, companies: 20, seed: 5 })
})
afterAll(async () => {
  await dataset?.cleanup()
})

describe('publish lock', () => {
  it('two builds into one folder at once: one publishes, the other is refused naming it, and the lock is gone after', async () => {
    const results = await Promise.allSettled([
      build(dataset, { now: new Date('2026-10-01T00:00:00Z') }),
      build(dataset, { now: new Date('2026-10-01T00:00:01Z') }),
    ])
    const published = results.filter((r) => r.status === 'fulfilled')
    const refused = results.filter((r) => r.status === 'rejected')
    expect(published).toHaveLength(1)
    expect(refused).toHaveLength(1)
    // Named by its holder line, which the winner writes just after taking the lock (the loser waits ~200 ms for it).
    expect(String((refused[0] as PromiseRejectedResult).reason)).toMatch(
      new RegExp(`another build \\(pid ${process.pid}, since [^)]+\\) is publishing into ${dataset.distDir};`),
    )
    expect(path.basename(await readlink(path.join(dataset.distDir, CURRENT_LINK)))).toBe(
      (published[0] as PromiseFulfilledResult<{ snapshotId: string }>).value.snapshotId,
    )
    await expect(stat(path.join(dataset.distDir, LOCK))).rejects.toThrow(/ENOENT/)
  })

  it('a lock held by a running process is refused; one whose holder is gone, or that nobody refreshed for a minute, is taken over', async () => {
    // Another process's lock, as proper-lockfile makes it (a folder whose mtime its holder keeps fresh), with
    // the holder line beside it.
    const lock = path.join(dataset.distDir, LOCK)
    const holderLine = (pid: number) =>
      writeFile(path.join(dataset.distDir, `${LOCK}-holder`), `build (pid ${pid}, since 2026-10-02T00:00:00.000Z)\n`)
    const holder = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)'], { stdio: 'ignore' })
    try {
      await mkdir(lock)
      await holderLine(holder.pid!)
      const said = `another build (pid ${holder.pid}, since 2026-10-02T00:00:00.000Z) is publishing into`
      await expect(build(dataset, { now: new Date('2026-10-02T00:00:00Z') })).rejects.toThrow(said)
      await expect(rollbackSnapshot(dataset.distDir)).rejects.toThrow(said)
      // A running pid that is no build (a restarted container reuses pids) holds it until it is a minute stale.
      const aMinuteAgo = new Date(Date.now() - 61_000)
      await utimes(lock, aMinuteAgo, aMinuteAgo)
      const afterStale = await build(dataset, { now: new Date('2026-10-03T00:00:00Z') })
      expect(path.basename(await readlink(path.join(dataset.distDir, CURRENT_LINK)))).toBe(afterStale.snapshotId)
    } finally {
      holder.kill('SIGKILL')
      await once(holder, 'exit')
    }
    // A killed build: its pid is gone, so the next build takes its fresh lock at once.
    await mkdir(lock)
    await holderLine(holder.pid!)
    const afterKill = await build(dataset, { now: new Date('2026-10-04T00:00:00Z') })
    expect(path.basename(await readlink(path.join(dataset.distDir, CURRENT_LINK)))).toBe(afterKill.snapshotId)
    await expect(stat(lock)).rejects.toThrow(/ENOENT/)
  })

  it('a rollback of a folder that does not exist says so and creates nothing', async () => {
    const missing = path.join(path.dirname(dataset.distDir), 'no-such-dist')
    await expect(rollbackSnapshot(missing)).rejects.toThrow(`no such dist folder: ${missing}`)
    await expect(stat(missing)).rejects.toThrow(/ENOENT/)
  })
})

describe('command-line arguments', () => {
  it('an unknown flag, a stray word or a --now that is no date is refused before any work (exit 2)', async () => {
    const out = path.join(path.dirname(dataset.distDir), 'cli-dist')
    await rm(out, { recursive: true, force: true })
    for (const [args, said] of [
      [['--quiett'], 'unknown argument --quiett'],
      [['extra'], 'unknown argument extra'],
      [['--now', 'yesterday'], '--now must be an RFC 3339 date-time'],
      [['--now', '2026-02-30T00:00:00Z'], '--now must be an RFC 3339 date-time'],
      [['--now', '2026-11-26T00:00:00'], '--now must be an RFC 3339 date-time'],
    ] as const) {
      const result = await runCli(['build', '--data', dataset.dataDir, '--out', out, ...args])
      expect(result.code, args.join(' ')).toBe(2)
      expect(result.stderr).toContain(said)
    }
    await expect(readlink(path.join(out, CURRENT_LINK))).rejects.toThrow(/ENOENT/)
  })

  it('--dist names the folder for build and rollback too (it was ignored, and rollback went to ./dist)', async () => {
    const out = path.join(path.dirname(dataset.distDir), 'cli-dist-2')
    await rm(out, { recursive: true, force: true })
    for (const now of ['2026-10-01T00:00:00Z', '2026-10-02T00:00:00Z']) {
      const result = await runCli(['build', '--data', dataset.dataDir, '--dist', out, '--quiet', '--now', now])
      expect(result.code, result.stderr).toBe(0)
    }
    const newest = await readlink(path.join(out, CURRENT_LINK))
    const rolled = await runCli(['rollback', '--dist', out])
    expect(rolled.code, rolled.stderr).toBe(0)
    expect(rolled.stdout).toContain(`rolled back ${out}/current`)
    expect(await readlink(path.join(out, CURRENT_LINK))).not.toBe(newest)
  })
})

describe('publish order', () => {
  it('rollback goes to the snapshot published before, whatever the ids say; again, one further; never to one never published', async () => {
    const distDir = path.join(path.dirname(dataset.distDir), 'order-dist')
    await rm(distDir, { recursive: true, force: true })
    const at = (day: number) => new Date(`2026-10-${String(day).padStart(2, '0')}T00:00:00Z`)
    const first = await build(dataset, { distDir, now: at(20) })
    const second = await build(dataset, { distDir, now: at(10) })
    // A build killed between its rename and the swap leaves a folder that was never current; its id sorts last.
    const orphan = '20991231T000000000Z-deadbeef'
    await cp(first.snapshotDir, path.join(distDir, SNAPSHOTS_DIR, orphan), { recursive: true })
    const third = await build(dataset, { distDir, now: at(5), keepSnapshots: 10 })

    expect(await rollbackSnapshot(distDir)).toEqual({ from: third.snapshotId, to: second.snapshotId })
    expect(await rollbackSnapshot(distDir)).toEqual({ from: second.snapshotId, to: first.snapshotId })
    await expect(rollbackSnapshot(distDir)).rejects.toThrow(/no snapshot published before/)

    // Pruning keeps the last publishes, not the highest ids: the orphan goes first.
    const fourth = await build(dataset, { distDir, now: at(1), keepSnapshots: 2 })
    expect((await readdir(path.join(distDir, SNAPSHOTS_DIR))).filter((name) => !name.startsWith('.')).sort()).toEqual(
      [first.snapshotId, fourth.snapshotId].sort(),
    )
  })

  it('a folder published before the history was kept still rolls back after its next build', async () => {
    const distDir = path.join(path.dirname(dataset.distDir), 'legacy-dist')
    await rm(distDir, { recursive: true, force: true })
    const at = (day: number) => new Date(`2026-10-${String(day).padStart(2, '0')}T00:00:00Z`)
    await build(dataset, { distDir, now: at(8) })
    const second = await build(dataset, { distDir, now: at(9) })
    await rm(path.join(distDir, HISTORY))
    const third = await build(dataset, { distDir, now: at(10) })
    expect(await rollbackSnapshot(distDir)).toEqual({ from: third.snapshotId, to: second.snapshotId })
  })

  it('a history that cannot be written stops the build before the swap, leaving nothing behind', async () => {
    const distDir = path.join(path.dirname(dataset.distDir), 'history-dist')
    await rm(distDir, { recursive: true, force: true })
    const first = await build(dataset, { distDir, now: new Date('2026-10-08T00:00:00Z') })
    await rm(path.join(distDir, HISTORY))
    await mkdir(path.join(distDir, HISTORY))
    await expect(build(dataset, { distDir, now: new Date('2026-10-09T00:00:00Z') })).rejects.toThrow(/EISDIR/)
    expect(path.basename(await readlink(path.join(distDir, CURRENT_LINK)))).toBe(first.snapshotId)
    expect((await readdir(distDir)).filter((name) => name.startsWith(`.${HISTORY}`))).toEqual([])
  })
})
