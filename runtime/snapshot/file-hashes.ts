/**
 * The content hash of each public file the manifest lists (`files`: the v1
 * pages, the OpenAPI document, the exports), as a server keeps it. At 1M
 * jobs that map is ~47,000 v1 pages: as a plain object, 95,000 strings that
 * lived as long as the snapshot and that every full collection marked
 * (~7 ms of a ~27 ms forced collection, measured with a 1M snapshot
 * loaded). The v1 pages' hashes are held instead as one string per page
 * size, a fixed-width hash per page; anything else in a map.
 */
import { CONTENT_HASH_LENGTH } from '../../core/content-hash.ts'

const V1_PAGE = /^v1\/([1-9]\d{0,5})\/([1-9]\d{0,8})\.json$/

/** One page size's hashes: page p's at [(p - 1) * width, p * width) of `joined`, when `present[p - 1]`. */
interface PageHashes {
  joined: string
  present: Uint8Array
}

export class FileHashes {
  /** Made by FileHashesBuilder.finish. */
  constructor(
    private readonly pages: Map<number, PageHashes>,
    private readonly others: Map<string, string>,
    /** Files listed: what the manifest's map held. */
    readonly size: number,
  ) {}

  /** The content hash the build recorded for `file` (a path under the snapshot), if it lists the file. */
  get(file: string): string | undefined {
    const found = this.others.get(file)
    if (found !== undefined) return found
    const match = V1_PAGE.exec(file)
    if (!match) return undefined
    const hashes = this.pages.get(Number(match[1]))
    const at = Number(match[2]) - 1
    if (hashes === undefined || hashes.present[at] !== 1) return undefined
    return hashes.joined.slice(at * CONTENT_HASH_LENGTH, (at + 1) * CONTENT_HASH_LENGTH)
  }

  /** Every file and its hash, in no particular order (for tests and tools, not requests). */
  *entries(): Generator<[string, string]> {
    yield* this.others
    for (const [limit, { present }] of this.pages)
      for (let at = 0; at < present.length; at++) {
        const file = `v1/${limit}/${at + 1}.json`
        if (present[at] === 1) yield [file, this.get(file)!]
      }
  }
}

/** One page size's hashes as the builder gathers them: written into bytes at their place, not kept as strings. */
interface PagesGathered {
  /** Page p's hash at [(p - 1) * width, p * width), when present[p - 1]. */
  bytes: Buffer
  present: Uint8Array
  /** Pages listed, and the highest number. */
  count: number
  last: number
  /** Pages too far past the others to grow the bytes for (not what a build writes), until finish places them. */
  far: Map<number, string>
}

/** Pages a page size's bytes first hold room for. */
const FIRST_PAGES = 1024

/**
 * Gathers a manifest's files (a slice at a time, in any order) into FileHashes.
 * The v1 pages' hashes are copied into one buffer per page size as they come:
 * kept as strings until the end, the 47,000 of a 1M-job snapshot outlived the
 * young generation's collections during a hot swap's load and each one copied
 * them all (two such collections back to back were the longest stalls left).
 */
export class FileHashesBuilder {
  private readonly pages = new Map<number, PagesGathered>()
  private readonly others = new Map<string, string>()
  private size = 0

  add(file: string, hash: string): void {
    this.size++
    const match = hash.length === CONTENT_HASH_LENGTH && isAscii(hash) ? V1_PAGE.exec(file) : null
    if (!match) {
      this.others.set(file, hash)
      return
    }
    const limit = Number(match[1])
    const page = Number(match[2])
    let pages = this.pages.get(limit)
    if (pages === undefined) {
      pages = {
        bytes: Buffer.alloc(FIRST_PAGES * CONTENT_HASH_LENGTH),
        present: new Uint8Array(FIRST_PAGES),
        count: 0,
        last: 0,
        far: new Map(),
      }
      this.pages.set(limit, pages)
    }
    pages.last = Math.max(pages.last, page)
    if (page > pages.present.length) {
      // Grown for pages near the others (a build lists 1..n); one far past them waits in `far`.
      if (page > 2 * (pages.count + 1) + FIRST_PAGES) {
        if (!pages.far.has(page)) pages.count++
        pages.far.set(page, hash)
        return
      }
      grow(pages, Math.max(page, 2 * pages.present.length))
    }
    if (pages.present[page - 1] !== 1) pages.count++
    pages.present[page - 1] = 1
    pages.bytes.write(hash, (page - 1) * CONTENT_HASH_LENGTH, 'latin1')
  }

  finish(): FileHashes {
    const pages = new Map<number, PageHashes>()
    for (const [limit, gathered] of this.pages) {
      const { bytes, present, count, last, far } = gathered
      // Pages far apart (not what a build writes: 1..n) stay in the map, not a string mostly of filler.
      if (last > 2 * count + FIRST_PAGES) {
        for (let at = 0; at < present.length; at++)
          if (present[at] === 1)
            this.others.set(
              `v1/${limit}/${at + 1}.json`,
              bytes.toString('latin1', at * CONTENT_HASH_LENGTH, (at + 1) * CONTENT_HASH_LENGTH),
            )
        for (const [page, hash] of far) this.others.set(`v1/${limit}/${page}.json`, hash)
        continue
      }
      if (last > present.length) grow(gathered, last)
      for (const [page, hash] of far) {
        gathered.present[page - 1] = 1
        gathered.bytes.write(hash, (page - 1) * CONTENT_HASH_LENGTH, 'latin1')
      }
      pages.set(limit, {
        joined: gathered.bytes.toString('latin1', 0, last * CONTENT_HASH_LENGTH),
        present: gathered.present.subarray(0, last),
      })
    }
    return new FileHashes(pages, this.others, this.size)
  }
}

/** Room for `pages` pages in a page size's bytes. */
function grow(gathered: PagesGathered, pages: number): void {
  const bytes = Buffer.alloc(pages * CONTENT_HASH_LENGTH)
  gathered.bytes.copy(bytes)
  const present = new Uint8Array(pages)
  present.set(gathered.present)
  gathered.bytes = bytes
  gathered.present = present
}

function isAscii(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0x7f) return false
  return true
}
