import { spawnSync } from 'node:child_process'
import { closeSync, mkdtempSync, openSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { LineWriter } from '../../runtime/index.ts'

describe('LineWriter (where JSON log lines go)', () => {
  it('keeps every line whole and in order, long and multi-byte ones too', () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'jobsnap-lines-')), 'log')
    const fd = openSync(file, 'w')
    const writer = new LineWriter(fd, 60_000)
    const expected: string[] = []
    for (let i = 0; i < 2000; i++) {
      // Short lines, lines near the chunk size, one longer than a chunk, and UTF-8 of 2-4 bytes a character.
      const filler = i === 1000 ? 'x'.repeat(9000) : i % 97 === 0 ? 'é€😀'.repeat(400 + (i % 3)) : 'y'.repeat(i % 300)
      const line = JSON.stringify({ n: i, filler })
      expected.push(line)
      writer.write(`${line}\n`)
    }
    // Nothing older than one chunk (64 KiB on a regular file) is held back before flush().
    const all = `${expected.join('\n')}\n`
    const beforeFlush = readFileSync(file, 'utf8')
    expect(all.startsWith(beforeFlush)).toBe(true)
    expect(Buffer.byteLength(all) - Buffer.byteLength(beforeFlush)).toBeLessThanOrEqual(64 << 10)
    writer.close()
    closeSync(fd)
    expect(readFileSync(file, 'utf8')).toBe(all)
  })

  it('on a pipe holds back at most one PIPE_BUF (4 KiB) chunk, so writers sharing the pipe never split lines', () => {
    // A child process writes to its stdout pipe and exits without flushing: what it held back is lost.
    const script = `
      import { LineWriter } from './runtime/index.ts'
      const writer = new LineWriter(process.stdout.fd, 60_000)
      for (let i = 0; i < 500; i++) writer.write(JSON.stringify({ n: i, filler: 'y'.repeat(i % 300) }) + '\\n')
      process.exit(0)
    `
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: path.resolve(import.meta.dirname, '../..'),
      encoding: 'utf8',
    })
    expect(child.status, child.stderr).toBe(0)
    const lines = child.stdout.split('\n').filter(Boolean)
    const all = Array.from({ length: 500 }, (_, i) => JSON.stringify({ n: i, filler: 'y'.repeat(i % 300) }))
    expect(lines).toEqual(all.slice(0, lines.length))
    const held = all.slice(lines.length).reduce((sum, line) => sum + line.length + 1, 0)
    expect(held).toBeGreaterThan(0)
    expect(held).toBeLessThanOrEqual(4096)
  })

  it('drops lines, once said on stderr, when its descriptor cannot be written, instead of throwing into a request', () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'jobsnap-lines-')), 'log')
    closeSync(openSync(file, 'w'))
    // Opened for reading only: every write fails with EBADF.
    const fd = openSync(file, 'r')
    const writer = new LineWriter(fd, 60_000)
    const said: string[] = []
    const write = process.stderr.write
    process.stderr.write = ((chunk: string) => said.push(chunk) > 0) as typeof process.stderr.write
    try {
      for (let i = 0; i < 100; i++) writer.write(`${'z'.repeat(100)}\n`)
      writer.close()
    } finally {
      process.stderr.write = write
      closeSync(fd)
    }
    expect(said).toHaveLength(1)
    expect(said[0]).toMatch(/log lines are being dropped: EBADF/)
  })
})
