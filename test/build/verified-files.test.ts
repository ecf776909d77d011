/**
 * The verification record (index/verified.json): the build vouches for the
 * index files it wrote, a server trusts a file only while its identity
 * (inode, size, modification and change times) is the one recorded, and a
 * file changed after it was verified is hashed again and refused, however
 * the change was made.
 */
import { spawnSync } from 'node:child_process'
import { open, readFile, realpath, rm, stat, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  CURRENT_LINK,
  fileIdentity,
  readVerifiedFiles,
  type SnapshotManifest,
  snapshotPaths,
  VERIFIED_FILES,
} from '../../core/index.ts'
import { createFileCache, loadSnapshot } from '../../runtime/index.ts'
import { buildFixture, type FixtureSnapshot } from '../support/fixtures.ts'

describe('the verification record', () => {
  let fixture: FixtureSnapshot
  let snapshotDir: string
  let manifest: SnapshotManifest
  const bodies = snapshotPaths.v2Bodies.bodies

  beforeAll(async () => {
    fixture = await buildFixture({ jobs: 300, companies: 40, seed: 11 })
    snapshotDir = await realpath(path.join(fixture.distDir, CURRENT_LINK))
    manifest = JSON.parse(await readFile(path.join(snapshotDir, snapshotPaths.manifest), 'utf8')) as SnapshotManifest
  })
  afterAll(() => fixture?.cleanup())

  /** Loads the snapshot with its v2 bodies read by position (as at 1M jobs), or held, and releases it. */
  const load = async (bodiesInMemoryBytes?: number) =>
    (await loadSnapshot(snapshotDir, createFileCache(0), bodiesInMemoryBytes)).close()

  it('is written by the build: every index file it hashed, as it is on disk', async () => {
    const record = await readVerifiedFiles(snapshotDir)
    const hashes = manifest.index_hashes ?? {}
    expect(Object.keys(hashes)).toContain(bodies)
    for (const [file, hash] of Object.entries(hashes)) {
      expect(record[file]?.hash, file).toBe(hash)
      expect(record[file]?.identity, file).toBe(
        fileIdentity(await stat(path.join(snapshotDir, file), { bigint: true })),
      )
    }
  })

  it('is written again by a load that had to check in full', async () => {
    await rm(path.join(snapshotDir, VERIFIED_FILES))
    await load(0)
    const record = await readVerifiedFiles(snapshotDir)
    for (const file of [bodies, snapshotPaths.jobIndexBinary, snapshotPaths.searchPostings, snapshotPaths.companies])
      expect(record[file]?.hash, file).toBe(manifest.index_hashes?.[file])
  })

  it('does not let through the companies changed in place after a load recorded them', async () => {
    await load(0)
    expect((await readVerifiedFiles(snapshotDir))[snapshotPaths.companies]?.hash).toBe(
      manifest.index_hashes?.[snapshotPaths.companies],
    )
    const file = path.join(snapshotDir, snapshotPaths.companies)
    const original = await readFile(file)
    const at = original.indexOf('"name":"') + 8
    const handle = await open(file, 'r+')
    await handle.write(Buffer.from([original[at] === 0x51 ? 0x58 : 0x51]), 0, 1, at)
    await expect(load(0)).rejects.toThrow(/companies\.json does not match the hash/)
    await handle.write(original, at, 1, at)
    await handle.close()
    await expect(load(0)).resolves.toBeUndefined()
  })

  it('does not let through a body file changed after it was verified, even with its modification time put back', async () => {
    await load(0)
    const file = path.join(snapshotDir, bodies)
    const before = await stat(file, { bigint: true })
    // One byte changed in place: the same inode and size, as a stray write or a bad disk would leave it.
    const handle = await open(file, 'r+')
    const byte = Buffer.alloc(1)
    await handle.read(byte, 0, 1, 100)
    byte[0] = byte[0] === 0x41 ? 0x42 : 0x41
    await handle.write(byte, 0, 1, 100)
    await handle.close()
    // Node's utimes rounds to microseconds; touch(1) puts back the nanoseconds.
    const ns = before.mtimeNs
    const touched = spawnSync('touch', [
      '-m',
      '-d',
      `@${ns / 10n ** 9n}.${String(ns % 10n ** 9n).padStart(9, '0')}`,
      file,
    ])
    expect(touched.status, touched.stderr?.toString()).toBe(0)
    const after = await stat(file, { bigint: true })
    expect([after.ino, after.size, after.mtimeNs]).toEqual([before.ino, before.size, before.mtimeNs])
    await expect(load(0)).rejects.toThrow(/v2-jobs\.bin does not match the hash/)
    await expect(load()).rejects.toThrow(/v2-jobs\.bin does not match the hash/)
    // The refusal wrote nothing that would vouch for the changed file.
    await expect(load(0)).rejects.toThrow(/v2-jobs\.bin does not match the hash/)
  })

  it('is what decides: a record naming the changed file as it now is would let it through', async () => {
    // Not a way in (whoever can write the record can write the manifest's hashes): this shows that a
    // load with a matching record reads nothing, so that the refusal above comes from the record not matching.
    const record = await readVerifiedFiles(snapshotDir)
    const identity = fileIdentity(await stat(path.join(snapshotDir, bodies), { bigint: true }))
    record[bodies] = { hash: manifest.index_hashes![bodies]!, identity }
    await writeFile(path.join(snapshotDir, VERIFIED_FILES), JSON.stringify(record))
    await expect(load(0)).resolves.toBeUndefined()
    await rm(path.join(snapshotDir, VERIFIED_FILES))
    await expect(load(0)).rejects.toThrow(/v2-jobs\.bin does not match the hash/)
  })
})
