/**
 * Layered packed bodies: a delta over an earlier snapshot's whole bodies
 * file, and a delta over that delta's base, read back exactly as the whole
 * file of the same bodies would be (in memory and from the files), and a
 * whole file written again from layered ones. Every way a page reads bodies
 * (one, a range, a framed range, a pick, a join in any order) is compared
 * with the bodies themselves.
 */
import { closeSync, fstatSync, openSync, readFileSync } from 'node:fs'
import { mkdir, symlink, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { PackedBodiesWriter, type PreviousBodies } from '../../build/index.ts'
import { bodiesBaseTarget, openPackedBodies, PackedBodies, snapshotPaths } from '../../core/index.ts'
import { tempDir } from '../support/fixtures.ts'

const paths = snapshotPaths.v2Bodies

/** A file's bytes as an aligned ArrayBuffer of their own (a small file's Buffer is a view of a shared pool). */
const bytesOf = (file: string) => {
  const bytes = readFileSync(file)
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length)
}

/** A small deterministic generator (the test must fail the same way twice). */
function random(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0
    return state / 2 ** 32
  }
}

const bodyOf = (label: string, size: number) => Buffer.from(JSON.stringify({ label, pad: 'é,"x"'.repeat(size) }))

/** The previous snapshot's bodies as a writer copies from them. */
function previousOf(dir: string): PreviousBodies {
  const packed = openPackedBodies(dir, paths)
  const fd = openSync(path.join(dir, paths.bodies), 'r')
  if (!packed.layered) return { packed, fd }
  const baseFd = openSync(path.join(dir, paths.base), 'r')
  return { packed, fd, base: { fd: baseFd, size: fstatSync(baseFd).size } }
}

function closePrevious(previous: PreviousBodies): void {
  previous.packed.close()
  closeSync(previous.fd)
  if (previous.base) closeSync(previous.base.fd)
}

/**
 * Writes snapshot `id` under `root`: `next` lists, per position, either a previous position (kept, taken in
 * runs of consecutive ones) or a new body. With `baseId`, a delta over that snapshot's whole file.
 */
async function writeSnapshot(
  root: string,
  id: string,
  next: (number | Buffer)[],
  previous?: { dir: string; bodies: Buffer[] },
  baseId?: string,
): Promise<Buffer[]> {
  const dir = path.join(root, id)
  await mkdir(path.join(dir, 'index'), { recursive: true })
  const before = previous && previousOf(previous.dir)
  let baseSize: number | undefined
  if (baseId !== undefined) {
    await symlink(bodiesBaseTarget(baseId, paths), path.join(dir, paths.base))
    baseSize = fstatSync(openSync(path.join(dir, paths.base), 'r')).size
  }
  const writer = new PackedBodiesWriter(dir, paths, undefined, baseSize)
  const bodies: Buffer[] = []
  try {
    for (let at = 0; at < next.length; ) {
      const item = next[at]!
      if (Buffer.isBuffer(item)) {
        writer.add(item)
        bodies.push(item)
        at++
        continue
      }
      let end = at + 1
      while (end < next.length && next[end] === (next[end - 1] as number) + 1) end++
      const kept = writer.keepRange(before!, item, item + end - at, true)
      const expected = previous!.bodies.slice(item, item + end - at)
      expect(kept.toString()).toBe(expected.map(String).join(','))
      bodies.push(...expected)
      at = end
    }
    const { lengths, starts } = await writer.finish()
    expect(starts !== undefined).toBe(baseId !== undefined)
    await writeFile(path.join(dir, paths.lengths), lengths)
    if (starts) await writeFile(path.join(dir, paths.starts), starts)
  } finally {
    writer.close()
    if (before) closePrevious(before)
  }
  return bodies
}

/** A next snapshot's positions: most kept in order, some dropped, changed or new. */
function changesOf(count: number, seed: number, label: string): (number | Buffer)[] {
  const next = random(seed)
  const out: (number | Buffer)[] = []
  for (let p = 0; p < count; p++) {
    const roll = next()
    if (roll < 0.05) continue
    if (roll < 0.12) out.push(bodyOf(`${label} changed ${p}`, Math.floor(next() * 9)))
    else out.push(p)
    if (next() < 0.04) out.push(bodyOf(`${label} new after ${p}`, Math.floor(next() * 9)))
  }
  return out
}

/** Every way of reading bodies gives the bodies `expected` hold, joined by commas. */
function expectReadsOf(packed: PackedBodies, expected: Buffer[], seed: number): void {
  const joined = (positions: number[]) => positions.map((p) => expected[p]!.toString()).join(',')
  const next = random(seed)
  const pickFrom = (n: number) => Math.floor(next() * n)
  expect(packed.size).toBe(expected.length)
  for (let p = 0; p < expected.length; p++) expect(packed.body(p).equals(expected[p]!), `body ${p}`).toBe(true)
  const [head, tail] = [Buffer.from('{"é":['), Buffer.from('],"n":1}')]
  for (let round = 0; round < 200; round++) {
    const from = pickFrom(expected.length)
    const to = Math.min(expected.length, from + pickFrom(60))
    const range = Array.from({ length: to - from }, (_, i) => from + i)
    expect(packed.range(from, to).toString(), `range ${from}..${to}`).toBe(joined(range))
    expect(packed.rangeLength(from, to)).toBe(Buffer.byteLength(joined(range)))
    const into = Buffer.alloc(packed.rangeLength(from, to) + 7)
    expect(packed.rangeInto(from, to, into).toString()).toBe(joined(range))
    expect(packed.framedRange(from, to, '{"é":[', '],"n":1}').toString()).toBe(`{"é":[${joined(range)}],"n":1}`)
    const ascending = range.filter(() => next() < 0.6)
    expect(packed.pick(ascending).toString(), `pick ${ascending}`).toBe(joined(ascending))
    const any = Array.from({ length: pickFrom(40) }, () => pickFrom(expected.length))
    // Runs of neighbours, as a date-ordered page of a broad filter reads them.
    const near = Array.from({ length: pickFrom(30) }, (_, i) => Math.min(expected.length - 1, from + i * 2))
    for (const positions of [any, near, [...near].reverse()])
      expect(packed.join(positions, head, tail).toString(), `join ${positions}`).toBe(
        `${head.toString()}${joined(positions)}${tail.toString()}`,
      )
  }
}

describe('layered packed bodies', () => {
  let root: string
  const versions: Buffer[][] = []

  beforeAll(async () => {
    root = await tempDir('packed-layers')
    const first = Array.from({ length: 400 }, (_, i) => bodyOf(`job ${i}`, i % 13))
    // A: whole. B: a delta over A. C: a delta over A again (B's delta bodies copied on). D: whole again, from C.
    versions.push(await writeSnapshot(root, 'A', first))
    versions.push(
      await writeSnapshot(
        root,
        'B',
        changesOf(versions[0]!.length, 1, 'B'),
        { dir: path.join(root, 'A'), bodies: versions[0]! },
        'A',
      ),
    )
    versions.push(
      await writeSnapshot(
        root,
        'C',
        changesOf(versions[1]!.length, 2, 'C'),
        { dir: path.join(root, 'B'), bodies: versions[1]! },
        'A',
      ),
    )
    // E: a delta over A whose first own bodies come right after A's last (ranges across the joint), then F
    // over E with base A, keeping all of E: only E's own bodies are copied on, none of the base's.
    const tail = [bodyOf('E new 1', 3), bodyOf('E new 2', 4)]
    const all = (count: number) => Array.from({ length: count }, (_, p) => p)
    versions.push(
      await writeSnapshot(root, 'E', [...all(400), ...tail], { dir: path.join(root, 'A'), bodies: versions[0]! }, 'A'),
    )
    versions.push(
      await writeSnapshot(
        root,
        'F',
        [...all(402), bodyOf('F new', 2)],
        { dir: path.join(root, 'E'), bodies: versions[3]! },
        'A',
      ),
    )
    versions.push(
      await writeSnapshot(root, 'D', changesOf(versions[2]!.length, 3, 'D'), {
        dir: path.join(root, 'C'),
        bodies: versions[2]!,
      }),
    )
  })

  it('a delta writes only the bodies its base does not hold', () => {
    const size = (id: string) => fstatSync(openSync(path.join(root, id, paths.bodies), 'r')).size
    const whole = (bodies: Buffer[]) => bodies.reduce((sum, body) => sum + body.length + 1, -1)
    expect(size('A')).toBe(whole(versions[0]!))
    // Around 12% of B's bodies are new or changed: its delta is a small part of what a whole file would be.
    expect(size('B')).toBeLessThan(whole(versions[1]!) / 4)
    expect(size('C')).toBeGreaterThan(size('B') * 1.2)
    expect(size('C')).toBeLessThan(whole(versions[2]!) / 2)
    expect(size('D')).toBe(whole(versions[5]!))
    // F kept all of E: its delta is E's two own bodies and its one new body.
    expect(size('F')).toBe(whole(versions[4]!.slice(-3)))
  })

  for (const [index, id] of ['A', 'B', 'C', 'E', 'F', 'D'].entries()) {
    it(`${id}: every read from the files is the bodies' bytes`, () => {
      const packed = openPackedBodies(path.join(root, id), paths)
      try {
        expect(packed.layered).toBe(id !== 'A' && id !== 'D')
        expectReadsOf(packed, versions[index]!, 10 + index)
      } finally {
        packed.close()
      }
    })
  }

  it('with the newest and best-paid bodies held once read (as a server opens them), the same bytes', () => {
    const dir = path.join(root, 'C')
    const expected = versions[2]!
    const lengths = new Uint32Array(bytesOf(path.join(dir, paths.lengths)))
    const starts = new Float64Array(bytesOf(path.join(dir, paths.starts)))
    // "Best paid" here: the oldest first; a budget of about 60 bodies, half for each end.
    const order = Uint32Array.from(expected.map((_, i) => expected.length - 1 - i))
    const rankOf = new Uint32Array(expected.length)
    order.forEach((p, rank) => {
      rankOf[p] = rank
    })
    const budget = expected.slice(0, 60).reduce((sum, body) => sum + body.length, 0)
    const file = path.join(dir, paths.bodies)
    const packed = PackedBodies.inFile(
      file,
      lengths,
      file,
      { bytes: budget, order, rankOf },
      {
        base: path.join(dir, paths.base),
        starts,
      },
    )
    try {
      // Twice: the first read fills what is held, the second copies it from memory.
      for (const seed of [30, 31]) expectReadsOf(packed, expected, seed)
    } finally {
      packed.close()
    }
  })

  it('in memory, the base, a comma and the delta read the same', () => {
    const dir = path.join(root, 'C')
    const base = readFileSync(path.join(dir, paths.base))
    const delta = readFileSync(path.join(dir, paths.bodies))
    const lengths = new Uint32Array(bytesOf(path.join(dir, paths.lengths)))
    const starts = new Float64Array(bytesOf(path.join(dir, paths.starts)))
    const packed = PackedBodies.inMemory(Buffer.concat([base, Buffer.from(','), delta]), lengths, 'C', {
      baseBytes: base.length,
      starts,
    })
    expectReadsOf(packed, versions[2]!, 20)
  })

  it('refuses starts that put a body outside its base or delta', () => {
    const dir = path.join(root, 'C')
    const lengths = new Uint32Array(bytesOf(path.join(dir, paths.lengths)))
    const starts = new Float64Array(bytesOf(path.join(dir, paths.starts)))
    const baseSize = fstatSync(openSync(path.join(dir, paths.base), 'r')).size
    const file = path.join(dir, paths.bodies)
    const layers = (changed: Float64Array) => ({ base: path.join(dir, paths.base), starts: changed })
    const across = Float64Array.from(starts)
    across[3] = baseSize - 2
    expect(() => PackedBodies.inFile(file, lengths, file, undefined, layers(across))).toThrow(/body 3 .* is not inside/)
    const past = Float64Array.from(starts)
    past[past.length - 1] = 1e12
    expect(() => PackedBodies.inFile(file, lengths, file, undefined, layers(past))).toThrow(/is not inside/)
    expect(() => PackedBodies.inFile(file, lengths.subarray(1), file, undefined, layers(starts))).toThrow(
      /body starts for/,
    )
  })
})
