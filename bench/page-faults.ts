/**
 * What first touches of fresh memory cost on this machine, with and without
 * glibc's huge pages for malloc (bin/huge-pages.mjs): reads a file into a new
 * buffer, then fills 20 new 64 MB buffers, printing each one's time and the
 * process's minor page faults, in child processes that alternate the setting.
 *
 *   npx tsx bench/page-faults.ts [file] [--rounds N]
 *
 * `file` defaults to the 1M snapshot's build cache (~1 GB), read through the
 * page cache: run it twice and the first read's disk time is gone.
 */
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { HUGE_PAGES_TUNABLE } from '../bin/huge-pages.mjs'

const FILL_BUFFERS = 20
const FILL_BYTES = 64 << 20

if (process.env.PAGE_FAULTS_CHILD) {
  const faults = () => process.resourceUsage().minorPageFault
  const started = performance.now()
  const before = faults()
  const bytes = readFileSync(process.env.PAGE_FAULTS_CHILD)
  const read = { ms: performance.now() - started, faults: faults() - before }
  const fillStarted = performance.now()
  const fillBefore = faults()
  let checksum = 0
  for (let i = 0; i < FILL_BUFFERS; i++) {
    const buffer = Buffer.allocUnsafe(FILL_BYTES)
    buffer.fill(i)
    checksum += buffer[FILL_BYTES - 1]!
  }
  const fill = { ms: performance.now() - fillStarted, faults: faults() - fillBefore }
  console.log(JSON.stringify({ bytes: bytes.length, read, fill, checksum }))
} else {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { rounds: { type: 'string', default: '2' } },
  })
  const file = positionals[0] ?? '.bench/dist-1m/current/index/build-cache.txt'
  const { GLIBC_TUNABLES: _, ...env } = process.env
  for (let round = 1; round <= Number(values.rounds); round++) {
    for (const tunables of [undefined, HUGE_PAGES_TUNABLE]) {
      const child = spawnSync(process.execPath, [...process.execArgv, import.meta.filename], {
        env: { ...env, PAGE_FAULTS_CHILD: file, ...(tunables ? { GLIBC_TUNABLES: tunables } : {}) },
        encoding: 'utf8',
      })
      if (child.status !== 0) throw new Error(`the measuring process failed:\n${child.stderr}`)
      const { bytes, read, fill } = JSON.parse(child.stdout) as Record<
        'read' | 'fill',
        { ms: number; faults: number }
      > & {
        bytes: number
      }
      console.log(
        `round ${round}, ${tunables ? 'huge pages' : '4 KB pages'}: read ${(bytes / 2 ** 20).toFixed(0)} MB into a new buffer ${read.ms.toFixed(0)} ms (${read.faults.toLocaleString('en-US')} minor faults); filled ${FILL_BUFFERS} new ${FILL_BYTES >> 20} MB buffers ${fill.ms.toFixed(0)} ms (${fill.faults.toLocaleString('en-US')} faults)`,
      )
    }
  }
}
