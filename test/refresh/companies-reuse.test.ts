/**
 * A hot swap to a snapshot whose companies are those of the one served
 * (a refresh that changed no employer) shares the served snapshot's company
 * table instead of parsing them again, once the new file is checked
 * against its manifest: a damaged one is still refused. Changed companies
 * are parsed as ever.
 */
import { readFile, realpath, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { snapshotPaths } from '../../core/index.ts'
import { createFileCache, type LoadedSnapshot, loadSnapshot } from '../../runtime/index.ts'
import { build, createDataset, editCompanies, retitleAll, snapshotDir, type RefreshDataset } from './support/dataset.ts'

let dataset: RefreshDataset
let first: LoadedSnapshot
let retitledDir: string
let changedDir: string

beforeAll(async () => {
  dataset = await createDataset({ prefix: 'companies-reuse' })
  const a = await build(dataset, { now: new Date(Date.now() - 120_000) })
  await retitleAll(dataset.dataDir, 1)
  const b = await build(dataset, { now: new Date(Date.now() - 60_000) })
  await editCompanies(dataset.dataDir, (companies) => {
    companies[0]!.name = `${companies[0]!.name} Renamed`
  })
  const c = await build(dataset)
  first = await loadSnapshot(await realpath(snapshotDir(dataset.distDir, a.snapshotId)), createFileCache(0))
  retitledDir = await realpath(snapshotDir(dataset.distDir, b.snapshotId))
  changedDir = await realpath(snapshotDir(dataset.distDir, c.snapshotId))
})

afterAll(async () => {
  first?.close()
  await dataset?.cleanup()
})

describe('companies across a hot swap', () => {
  it('are the served snapshot’s table when the file is the same, parsed again when it changed', async () => {
    const same = await loadSnapshot(retitledDir, createFileCache(0), undefined, first)
    same.close()
    expect(same.id).not.toBe(first.id)
    expect(same.companies).toBe(first.companies)

    const changed = await loadSnapshot(changedDir, createFileCache(0), undefined, first)
    changed.close()
    expect(changed.companies).not.toBe(first.companies)
    expect(changed.companies.size).toBe(first.companies.size)
    const names = (snapshot: LoadedSnapshot) =>
      Array.from({ length: snapshot.companies.size }, (_, i) => snapshot.companies.company(i).name)
    expect(names(changed).filter((name) => name.endsWith(' Renamed'))).toHaveLength(1)
    expect(names(first).some((name) => name.endsWith(' Renamed'))).toBe(false)
  })

  it('are refused when the file no longer matches its manifest, shared or not (last: it damages a snapshot)', async () => {
    const file = path.join(retitledDir, snapshotPaths.companies)
    const bytes = await readFile(file)
    // A changed letter inside a name: still JSON, another hash.
    const at = bytes.indexOf('"name":"') + 8
    bytes[at] = bytes[at] === 0x51 ? 0x52 : 0x51
    await writeFile(file, bytes)
    await expect(loadSnapshot(retitledDir, createFileCache(0), undefined, first)).rejects.toThrow(
      /companies\.json does not match the hash in the manifest/,
    )
    await expect(loadSnapshot(retitledDir, createFileCache(0))).rejects.toThrow(/does not match the hash/)
  })
})
