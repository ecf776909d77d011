/**
 * The build splits NDJSON into records as bytes, a read at a time. node:readline
 * (how a line-oriented reader of the same file sees it) is the oracle: the same
 * records, the same 1-based line numbers (blank lines counted), the same text.
 */
import { createReadStream } from 'node:fs'
import { rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { createInterface } from 'node:readline'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readRecordTexts } from '../../build/index.ts'
import { tempDir } from '../support/fixtures.ts'

let dir: string
beforeAll(async () => {
  dir = await tempDir('read-dataset')
})
afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

async function readlineRecords(file: string): Promise<{ line: number; text: string }[]> {
  const out: { line: number; text: string }[] = []
  let line = 0
  for await (const text of createInterface({ input: createReadStream(file, 'utf8'), crlfDelay: Infinity })) {
    line++
    if (text.trim() !== '') out.push({ line, text })
  }
  return out
}

async function buildRecords(name: string): Promise<{ line: number; text: string }[]> {
  const out: { line: number; text: string }[] = []
  for await (const batch of readRecordTexts(dir, name, [])) {
    for (const { source, raw } of batch) out.push({ line: source.line!, text: raw.toString('utf8') })
  }
  return out
}

describe('NDJSON records', () => {
  it('are the lines readline sees: LF, CRLF, lone CR, blank and whitespace lines, no final break', async () => {
    const text = [
      '{"a":1}\n',
      '{"b":"é ünïcode 🎉"}\r\n',
      '\n',
      '   \t \n',
      '{"c":3}\r{"d":4}\n',
      '\r\n',
      ' {"e":"leading space"}\n',
      '{"f":6}',
    ].join('')
    await writeFile(path.join(dir, 'jobs.ndjson'), text)
    const expected = await readlineRecords(path.join(dir, 'jobs.ndjson'))
    expect(expected.map((r) => r.line)).toEqual([1, 2, 5, 6, 8, 9])
    expect(await buildRecords('jobs.ndjson')).toEqual(expected)
  })

  it('across reads: a line longer than one read, records of many sizes straddling read boundaries', async () => {
    // ~9 MB: records of many sizes, one of 5 MB (longer than the 4 MB read).
    const lines: string[] = []
    for (let i = 0; i < 3000; i++) lines.push(JSON.stringify({ i, pad: 'x'.repeat((i * 7919) % 2000) }))
    lines.splice(1500, 0, JSON.stringify({ big: 'y'.repeat(5 << 20) }))
    await writeFile(path.join(dir, 'big.ndjson'), `${lines.join('\n')}\n\n`)
    const records = await buildRecords('big.ndjson')
    expect(records).toEqual(await readlineRecords(path.join(dir, 'big.ndjson')))
    expect(records).toHaveLength(3001)
  })
})
