/**
 * A snapshot's list of job files (build/job-files.ts), as the build keeps it:
 * the previous snapshot's index/job-files.txt read as it is, the new one made
 * of that list's lines where a job is republished unchanged and new lines for
 * the rest. The bytes are the list a map of every job file would have given,
 * and what changed between the two lists is what comparing two such maps
 * finds.
 */
import { createHash } from 'node:crypto'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { JobFileList, JobFileListBuilder } from '../../build/index.ts'

const hash22 = fc.stringMatching(/^[A-Za-z0-9_-]{22}$/)
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('base64url')
const linesOf = (entries: readonly (readonly [string, string])[]) =>
  Buffer.from(entries.map(([slug, hash]) => `${slug}\t${hash}\n`).join(''), 'latin1')

describe('JobFileList', () => {
  it('reads a list whose hash and count are the recorded ones, and refuses anything else', () => {
    const entries = [
      ['a-1', 'h1'],
      ['b-2', 'h2'],
      ['c-3', 'h3'],
    ] as const
    const bytes = linesOf(entries)
    const list = JobFileList.read(bytes, { count: 3, sha256: sha256(bytes) })!
    expect([...list.entries()]).toEqual(entries)
    expect(list.positionOf('b-2')).toBe(1)
    expect(list.positionOf('d-4')).toBeUndefined()
    expect(list.hashOf('v2/jobs/c-3.json')).toBe('h3')
    expect(list.hashOf('v1/25/1.json')).toBeUndefined()
    expect(list.pathAt(0)).toBe('v2/jobs/a-1.json')
    expect(list.hashIs(1, Buffer.from('xh2y'), 1, 3)).toBe(true)
    expect(list.hashIs(1, Buffer.from('xh3y'), 1, 3)).toBe(false)
    expect(list.hashIs(1, Buffer.from('xh2y'), 1, 4)).toBe(false)
    expect(JobFileList.read(bytes, { count: 2, sha256: sha256(bytes) })).toBeUndefined()
    expect(JobFileList.read(bytes, { count: 3, sha256: 'another' })).toBeUndefined()
    for (const damaged of ['a-1\th1\nb-2', 'a-1 h1\n', '\th1\n', 'a-1\t\n', 'a-1\th1\nb-2\th2'])
      expect(JobFileList.read(Buffer.from(damaged)), JSON.stringify(damaged)).toBeUndefined()
    expect(JobFileList.read(Buffer.alloc(0))?.size).toBe(0)
  })

  it('finds each of many slugs where it is listed, and none that is not', () => {
    const entries = Array.from({ length: 5000 }, (_, i) => [`job-${i.toString(36)}`, `h${i}`] as const)
    const list = JobFileList.of(entries)
    for (const [i, [slug]] of entries.entries()) expect(list.positionOf(slug)).toBe(i)
    for (const absent of ['job-', 'job-10000', 'job-zzzz', 'jobs-1', '', 'job-1 '])
      expect(list.positionOf(absent)).toBeUndefined()
  })

  it('makes the new list and its changes as maps of every job file would', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 0, max: 400 }), { maxLength: 120 }),
        fc.array(fc.record({ keep: fc.integer({ min: 0, max: 3 }), hash: hash22, hinted: fc.boolean() }), {
          maxLength: 120,
        }),
        fc.array(fc.integer({ min: 0, max: 400 }), { maxLength: 30 }),
        (previousIds, plan, newIds) => {
          const previousEntries = previousIds.map((id) => [`job-${id}`, `h${id}`] as const)
          const previous = JobFileList.of(previousEntries)
          // The new list: each previous job kept (same line), changed (new hash), or gone, in order, with new
          // slugs among them; a slug once only.
          const next: [string, string][] = []
          const builder = new JobFileListBuilder(previous, previousEntries.length + newIds.length)
          const used = new Set<string>()
          const added = new Set<string>()
          previousEntries.forEach(([slug, hash], q) => {
            const step = plan[q % Math.max(plan.length, 1)] ?? { keep: 0, hash: 'x', hinted: false }
            if (step.keep === 0 || step.keep === 1) {
              builder.keep(q)
              next.push([slug, hash])
            } else if (step.keep === 2) {
              expect(builder.add(slug, step.hash, step.hinted ? q : undefined)).toBe(hash)
              added.add(slug)
              next.push([slug, step.hash])
            }
            used.add(slug)
            const fresh = newIds[q]
            if (fresh !== undefined && !used.has(`new-${fresh}`)) {
              used.add(`new-${fresh}`)
              expect(builder.add(`new-${fresh}`, `n${fresh}`)).toBeUndefined()
              added.add(`new-${fresh}`)
              next.push([`new-${fresh}`, `n${fresh}`])
            }
          })
          expect(builder.size).toBe(next.length)
          expect(Buffer.concat(builder.finish()).equals(linesOf(next))).toBe(true)
          expect([...builder.entries()]).toEqual(next)

          const before = new Map(previousEntries.map(([slug, hash]) => [`v2/jobs/${slug}.json`, hash]))
          const after = new Map(next.map(([slug, hash]) => [`v2/jobs/${slug}.json`, hash]))
          const changes = builder.changes()
          const sorted = (files: string[]) => [...files].sort()
          expect(sorted(changes.added)).toEqual(sorted([...after.keys()].filter((file) => !before.has(file))))
          expect(sorted(changes.removed)).toEqual(sorted([...before.keys()].filter((file) => !after.has(file))))
          expect(sorted(changes.changed)).toEqual(
            sorted([...after].filter(([file, hash]) => before.has(file) && before.get(file) !== hash).map(([f]) => f)),
          )
          const slugOf = (file: string) => file.slice('v2/jobs/'.length, -'.json'.length)
          for (const file of [...changes.added, ...changes.changed, ...changes.removed])
            expect(changes.hashes[slugOf(file)]).toEqual([before.get(file) ?? null, after.get(file) ?? null])
          expect(Object.keys(changes.hashes).length).toBe(
            changes.added.length + changes.changed.length + changes.removed.length,
          )
          for (const [slug] of [...previousEntries, ...next])
            expect(builder.addedSlug(slug), slug).toBe(added.has(slug))
        },
      ),
    )
  })

  it('with no previous list, every job file is added', () => {
    const builder = new JobFileListBuilder(undefined, 2)
    expect(builder.add('a', 'h1')).toBeUndefined()
    expect(builder.add('b', 'h2')).toBeUndefined()
    expect(Buffer.concat(builder.finish()).toString()).toBe('a\th1\nb\th2\n')
    expect(builder.changes()).toEqual({
      added: ['v2/jobs/a.json', 'v2/jobs/b.json'],
      changed: [],
      removed: [],
      hashes: { a: [null, 'h1'], b: [null, 'h2'] },
    })
    expect(builder.addedSlug('a')).toBe(true)
    expect(builder.addedSlug('c')).toBe(false)
  })
})
