/**
 * The memory one index's bitsets live in, and the word-by-word passes over
 * them (AND, OR, AND-and-count) run as WebAssembly SIMD (bit-passes.wat).
 * At a million jobs a pass is 31,250 words, and the same loops in
 * JavaScript were about half of an uncached list query's time
 * (`bench/list-cost.ts --compare` against the code before: ~205 against
 * ~430 us per query and page).
 *
 * The memory is a shared WebAssembly memory because growing a shared
 * memory never detaches the views already handed out (growing an ordinary
 * one replaces its buffer, and every Uint32Array over the old one reads as
 * empty); the engine's JavaScript keeps reading and writing bits through
 * plain Uint32Array views. Nothing is ever freed: the index's kept bitsets
 * live as long as it does, and BitsetCache reuses its scratch bitsets, so
 * the arena holds the kept bitsets plus the most scratch one query used.
 */
import { BIT_PASSES_WASM } from './bit-passes.wasm.ts'

interface BitPasses {
  and(out: number, a: number, words: number): void
  andCount(out: number, a: number, words: number): number
  countAnd(a: number, b: number, words: number): number
  or(out: number, a: number, b: number, words: number): void
  andOr(out: number, a: number, b: number, words: number): void
}

const PAGE_BYTES = 65_536
/** The most a 32-bit WebAssembly memory holds (4 GiB); a shared memory reserves it as address space, not as memory. */
const MAX_PAGES = 65_536

/** The part of WebAssembly used here: Node has it all, but TypeScript declares it only in its DOM library, not loaded here. */
interface SharedMemory {
  readonly buffer: SharedArrayBuffer
  grow(pages: number): number
}
interface WebAssemblyApi {
  Module: new (bytes: Uint8Array) => object
  Instance: new (module: object, imports: object) => { readonly exports: unknown }
  Memory: new (descriptor: { initial: number; maximum: number; shared: true }) => SharedMemory
}
const { WebAssembly: wasm } = globalThis as unknown as { WebAssembly: WebAssemblyApi }

let compiled: object | undefined

export class BitArena {
  /** 32-bit words in each bitset. */
  readonly words: number
  /** Bytes between two bitsets: each starts 16-byte aligned, for the 128-bit loads. */
  private readonly stride: number
  private memory: SharedMemory | undefined
  private passes!: BitPasses
  private used = 0

  /** An arena for bitsets of `size` positions; its memory is reserved on the first allocate. */
  constructor(readonly size: number) {
    this.words = (size + 31) >>> 5
    this.stride = Math.ceil(this.words / 4) * 16
  }

  /** A new zeroed bitset of `size` positions, valid as long as the arena is. */
  allocate(): Uint32Array {
    const memory = this.memory ?? this.open()
    const end = this.used + this.stride
    const pages = memory.buffer.byteLength / PAGE_BYTES
    const needed = Math.ceil(end / PAGE_BYTES)
    // Grown by half again at least: one grow per few bitsets, not one per bitset.
    if (needed > pages) memory.grow(Math.min(MAX_PAGES, Math.max(needed, Math.ceil(pages * 1.5))) - pages)
    const bits = new Uint32Array(memory.buffer, this.used, this.words)
    this.used = end
    return bits
  }

  /** Bytes of bitsets handed out so far. */
  get bytes(): number {
    return this.used
  }

  /** out &= a, on the first `words` words. */
  and(out: Uint32Array, a: Uint32Array, words: number): void {
    this.passes.and(out.byteOffset, a.byteOffset, words)
  }

  /** out &= a on the first `words` words; the bits left set there. */
  andCount(out: Uint32Array, a: Uint32Array, words: number): number {
    return this.passes.andCount(out.byteOffset, a.byteOffset, words)
  }

  /** The bits set in both a and b (their first `words` words); writes neither. */
  countAnd(a: Uint32Array, b: Uint32Array, words: number): number {
    return this.passes.countAnd(a.byteOffset, b.byteOffset, words)
  }

  /** The bits set in the first `words` words. */
  count(bits: Uint32Array, words: number): number {
    return this.passes.countAnd(bits.byteOffset, bits.byteOffset, words)
  }

  /** out = a | b on the first `words` words (out may be a or b). */
  or(out: Uint32Array, a: Uint32Array, b: Uint32Array, words: number): void {
    this.passes.or(out.byteOffset, a.byteOffset, b.byteOffset, words)
  }

  /** out &= a | b on the first `words` words. */
  andOr(out: Uint32Array, a: Uint32Array, b: Uint32Array, words: number): void {
    this.passes.andOr(out.byteOffset, a.byteOffset, b.byteOffset, words)
  }

  private open(): SharedMemory {
    compiled ??= new wasm.Module(Buffer.from(BIT_PASSES_WASM, 'base64'))
    const memory = new wasm.Memory({ initial: 1, maximum: MAX_PAGES, shared: true })
    this.passes = new wasm.Instance(compiled, { env: { memory } }).exports as unknown as BitPasses
    this.memory = memory
    return memory
  }
}
