/**
 * The first build after an upgrade that changed the snapshot format: the
 * live snapshot of the old format still links the change feed and lends its
 * unchanged public files (their bytes are the same), and rollback refuses to
 * go back to a snapshot no server of this version would load. The old
 * format is made by hand: the manifest of a real snapshot, its format
 * number lowered.
 */
import { readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { rollbackSnapshot } from '../../build/index.ts'
import { SNAPSHOT_FORMAT } from '../../core/index.ts'
import { build, createDataset, type RefreshDataset } from './support/dataset.ts'

let dataset: RefreshDataset

beforeAll(async () => {
  dataset = await createDataset({ prefix: 'format-upgrade', jobs: 120, companies: 20 })
})

afterAll(async () => {
  await dataset?.cleanup()
})

describe('a snapshot of the previous format', () => {
  it('is linked and lent from by the next build, and never rolled back to', async () => {
    const old = await build(dataset, { now: new Date('2026-11-20T00:00:00Z') })
    const manifestFile = path.join(old.snapshotDir, 'manifest.json')
    const manifest = await readFile(manifestFile, 'utf8')
    expect(manifest).toContain(`"format": ${SNAPSHOT_FORMAT}`)
    await writeFile(manifestFile, manifest.replace(`"format": ${SNAPSHOT_FORMAT}`, `"format": ${SNAPSHOT_FORMAT - 1}`))

    const next = await build(dataset, { now: new Date('2026-11-20T00:01:00Z') })
    expect(
      next.filesReused + next.jobFilesInBase,
      'the unchanged public files are hard-linked (or left in the base it looks through)',
    ).toBeGreaterThan(100)
    const link = JSON.parse(await readFile(path.join(next.snapshotDir, 'index/changes.json'), 'utf8'))
    expect(link).toMatchObject({ previous: old.snapshotId, added: [], updated: [], removed: [] })

    await expect(rollbackSnapshot(dataset.distDir)).rejects.toThrow(
      `is format ${SNAPSHOT_FORMAT - 1}, which this version does not serve`,
    )
  })
})
