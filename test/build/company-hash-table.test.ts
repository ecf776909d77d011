import { describe, expect, it } from 'vitest'
import { CompanyHashTable, companyHash } from '../../build/index.ts'

/** A cache line's bytes with `hash` in the middle, as takeCached finds a company hash there. */
function lineWith(hash: string): { bytes: Buffer; start: number; end: number } {
  const bytes = Buffer.from(`key\t${hash}\t12\t{}\n`, 'latin1')
  return { bytes, start: 4, end: 4 + hash.length }
}

describe('CompanyHashTable', () => {
  const companies = Array.from({ length: 2000 }, (_, i) => ({ id: `c${i}`, name: `Company ${i}` }))
  const hashes = companies.map(companyHash)

  it('finds every company by the bytes of its hash', () => {
    const table = new CompanyHashTable(hashes)
    for (const [index, hash] of hashes.entries()) {
      const { bytes, start, end } = lineWith(hash)
      expect(table.find(bytes, start, end)).toBe(index)
    }
  })

  it('tells apart hashes that share the digits placing them, and finds none for an unknown or cut hash', () => {
    // Same first five digits (same slot), different after: only probing and the full compare tell them apart.
    const twins = [`AAAAA${'x'.repeat(22)}`, `AAAAA${'y'.repeat(22)}`, `AAAAA${'z'.repeat(22)}`]
    const table = new CompanyHashTable([...hashes, ...twins])
    for (const [i, twin] of twins.entries()) {
      const { bytes, start, end } = lineWith(twin)
      expect(table.find(bytes, start, end)).toBe(hashes.length + i)
    }
    const unknown = lineWith(`AAAAA${'w'.repeat(22)}`)
    expect(table.find(unknown.bytes, unknown.start, unknown.end)).toBe(-1)
    const cut = lineWith(twins[0]!)
    expect(table.find(cut.bytes, cut.start, cut.end - 1)).toBe(-1)
    expect(table.find(cut.bytes, cut.start, cut.end + 1)).toBe(-1)
  })

  it('a changed company is not found under its old hash', () => {
    const renamed = companies.map((company, i) => (i === 7 ? { ...company, name: 'Renamed' } : company))
    const table = new CompanyHashTable(renamed.map(companyHash))
    const old = lineWith(hashes[7]!)
    expect(table.find(old.bytes, old.start, old.end)).toBe(-1)
    const other = lineWith(hashes[8]!)
    expect(table.find(other.bytes, other.start, other.end)).toBe(8)
  })

  it('an empty dataset of companies finds nothing', () => {
    const { bytes, start, end } = lineWith(hashes[0]!)
    expect(new CompanyHashTable([]).find(bytes, start, end)).toBe(-1)
  })
})
