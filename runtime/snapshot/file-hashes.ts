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

/** Gathers a manifest's files (a slice at a time, in any order) into FileHashes. */
export class FileHashesBuilder {
  /** Per page size, each page's hash by its number, and the highest number, until finish lays them out. */
  private readonly pages = new Map<number, { byPage: Map<number, string>; last: number }>()
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
    let size = this.pages.get(limit)
    if (size === undefined) {
      size = { byPage: new Map(), last: 0 }
      this.pages.set(limit, size)
    }
    size.byPage.set(page, hash)
    size.last = Math.max(size.last, page)
  }

  finish(): FileHashes {
    const pages = new Map<number, PageHashes>()
    const filler = '-'.repeat(CONTENT_HASH_LENGTH)
    for (const [limit, { byPage, last }] of this.pages) {
      // Pages far apart (not what a build writes: 1..n) stay in the map, not a string mostly of filler.
      if (last > 2 * byPage.size + 1024) {
        for (const [page, hash] of byPage) this.others.set(`v1/${limit}/${page}.json`, hash)
        continue
      }
      const present = new Uint8Array(last)
      const parts: string[] = new Array(last)
      for (let at = 0; at < last; at++) {
        const hash = byPage.get(at + 1)
        present[at] = hash === undefined ? 0 : 1
        parts[at] = hash ?? filler
      }
      pages.set(limit, { joined: parts.join(''), present })
    }
    return new FileHashes(pages, this.others, this.size)
  }
}

function isAscii(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0x7f) return false
  return true
}
