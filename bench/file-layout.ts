/**
 * What a snapshot's file layout costs: N job-sized files (1.7 KB) created in
 * one folder, then in 100 fan-out folders (named by the last two digits, as
 * nginx could route with a regex), each then hard-linked into a new folder
 * (what an incremental build does per unchanged file), read back at random
 * (every 97th file) and deleted (what pruning an old snapshot does).
 *
 *   npx tsx bench/file-layout.ts [--files N]   (default 1,000,000; in .bench/)
 *
 * Prints microseconds per file for each step and layout. It is the figure
 * behind keeping one flat folder and cutting the file count instead: three
 * files per job (identity, .br, .gz) cost three times the creates and links.
 *
 * The links are also timed on two threads, as the build makes them (wall
 * time over the file count): a rebuild makes one link per unchanged job
 * file, so this is the floor of a rebuild's time that no caching removes
 * while each snapshot is a complete folder. In one folder the two threads
 * mostly wait for each other (the kernel serialises entries made in one
 * directory); in fan-out folders, each thread taking whole folders, they do not.
 */
import { linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { Worker } from 'node:worker_threads'

const { values } = parseArgs({ options: { files: { type: 'string', default: '1000000' } } })
const files = Number(values.files)
if (!Number.isSafeInteger(files) || files < 1000)
  throw new Error(`--files must be a whole number of at least 1000; got ${values.files}`)

const root = path.resolve('.bench', 'file-layout')
const body = Buffer.alloc(1700, 'x')
const name = (i: number) => `senior-platform-engineer-acme-corp-${i}.json`

type Layout = 'one folder' | '100 folders'
const subdir = (layout: Layout, i: number) => (layout === 'one folder' ? '' : `${String(i % 100).padStart(2, '0')}/`)

function makeFolders(dir: string, layout: Layout): void {
  mkdirSync(dir, { recursive: true })
  if (layout === '100 folders') for (let b = 0; b < 100; b++) mkdirSync(path.join(dir, String(b).padStart(2, '0')))
}

/**
 * Hard-links every file from `from` to `to` on `threads` worker threads: in fan-out folders each thread
 * takes whole folders, in one folder every `threads`-th file. Resolves with wall microseconds per file.
 */
async function linkOnThreads(from: string, to: string, layout: Layout, threads: number): Promise<number> {
  const shares: string[][] = Array.from({ length: threads }, () => [])
  for (let i = 0; i < files; i++)
    shares[(layout === 'one folder' ? i : i % 100) % threads]!.push(subdir(layout, i) + name(i))
  const code = `
    const { linkSync } = require('node:fs')
    const { workerData: { from, to, share } } = require('node:worker_threads')
    for (const file of share) linkSync(from + '/' + file, to + '/' + file)`
  const started = performance.now()
  await Promise.all(
    shares.map((share) => {
      const worker = new Worker(code, { eval: true, workerData: { from, to, share } })
      return new Promise<void>((resolve, reject) => {
        worker.once('error', reject)
        worker.once('exit', (exitCode) =>
          exitCode === 0 ? resolve() : reject(new Error(`link thread exited ${exitCode}`)),
        )
      })
    }),
  )
  return ((performance.now() - started) * 1000) / files
}

/** Microseconds per file of `step` over `count` files. */
function perFile(count: number, step: () => void): number {
  const started = performance.now()
  step()
  return ((performance.now() - started) * 1000) / count
}

console.log(
  `| layout (${files.toLocaleString('en-US')} files of 1.7 KB) | create us/file | hard link us/file | hard link, 2 threads, us/file (s for all) | random read us/file | delete us/file |`,
)
console.log('| --- | --- | --- | --- | --- | --- |')
for (const layout of ['one folder', '100 folders'] as const) {
  rmSync(root, { recursive: true, force: true })
  const source = path.join(root, 'a')
  const linked = path.join(root, 'b')
  makeFolders(source, layout)
  makeFolders(linked, layout)
  const create = perFile(files, () => {
    for (let i = 0; i < files; i++) writeFileSync(path.join(source, subdir(layout, i) + name(i)), body)
  })
  const link = perFile(files, () => {
    for (let i = 0; i < files; i++)
      linkSync(path.join(source, subdir(layout, i) + name(i)), path.join(linked, subdir(layout, i) + name(i)))
  })
  const linkedOnTwo = path.join(root, 'c')
  makeFolders(linkedOnTwo, layout)
  const linkTwoThreads = await linkOnThreads(source, linkedOnTwo, layout, 2)
  rmSync(linkedOnTwo, { recursive: true })
  const reads = Math.floor(files / 97)
  const read = perFile(reads, () => {
    for (let i = 0; i < files; i += 97) readFileSync(path.join(linked, subdir(layout, i) + name(i)))
  })
  const remove = perFile(files, () => rmSync(linked, { recursive: true }))
  const twoThreads = `${linkTwoThreads.toFixed(1)} (${((linkTwoThreads * files) / 1e6).toFixed(2)} s)`
  console.log(
    `| ${layout} | ${create.toFixed(1)} | ${link.toFixed(1)} | ${twoThreads} | ${read.toFixed(1)} | ${remove.toFixed(1)} |`,
  )
}
rmSync(root, { recursive: true, force: true })
