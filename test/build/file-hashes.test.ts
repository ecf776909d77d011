/**
 * A snapshot's public file hashes as the server keeps them
 * (runtime/snapshot/file-hashes.ts): the v1 pages packed one string per page
 * size, anything else in a map. Every file the manifest lists is found with
 * its hash, nothing else is, and pages far apart do not become a string of
 * filler.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { FileHashesBuilder } from '../../runtime/index.ts'

const hash22 = fc.stringMatching(/^[A-Za-z0-9_-]{22}$/)

describe('FileHashes', () => {
  it('finds every listed file with its hash, and nothing else', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 300 }),
        fc.integer({ min: 0, max: 80 }),
        fc.array(hash22, { minLength: 400, maxLength: 400 }),
        (pages25, pages100, hashes) => {
          const listed = new Map<string, string>()
          for (let p = 1; p <= pages25; p++) listed.set(`v1/25/${p}.json`, hashes[p % hashes.length]!)
          for (let p = 1; p <= pages100; p++) listed.set(`v1/100/${p}.json`, hashes[(p * 7) % hashes.length]!)
          listed.set('openapi.yaml', hashes[0]!)
          listed.set('exports/jobs.ndjson.gz', 'a hash of another length')
          listed.set('v1/25/0.json', hashes[1]!) // not a page number a build writes: kept as it is
          const builder = new FileHashesBuilder()
          // In any order, as the manifest's slices may give them.
          for (const [file, hash] of [...listed].reverse()) builder.add(file, hash)
          const files = builder.finish()
          expect(files.size).toBe(listed.size)
          for (const [file, hash] of listed) expect(files.get(file), file).toBe(hash)
          expect(new Map(files.entries())).toEqual(listed)
          for (const absent of [
            `v1/25/${pages25 + 1}.json`,
            `v1/100/${pages100 + 1}.json`,
            'v1/50/1.json',
            'v1/25/x.json',
          ])
            expect(files.get(absent), absent).toBeUndefined()
        },
      ),
      { numRuns: 60 },
    )
  })

  it('keeps a page missing between two listed ones absent, and pages far apart in the map', () => {
    const builder = new FileHashesBuilder()
    builder.add('v1/25/1.json', 'A'.repeat(22))
    builder.add('v1/25/3.json', 'C'.repeat(22))
    builder.add('v1/10/1.json', 'B'.repeat(22))
    builder.add('v1/10/900000000.json', 'Z'.repeat(22))
    const started = performance.now()
    const files = builder.finish()
    expect(performance.now() - started).toBeLessThan(1000) // not a 900M-entry string
    expect(files.get('v1/25/2.json')).toBeUndefined()
    expect(files.get('v1/25/3.json')).toBe('C'.repeat(22))
    expect(files.get('v1/10/900000000.json')).toBe('Z'.repeat(22))
    expect(files.get('v1/10/1.json')).toBe('B'.repeat(22))
    expect(files.get('v1/10/2.json')).toBeUndefined()
  })
})
