/**
 * The bulk exports' thread (started by ExportsThread): takes the batches of
 * v2 bodies it is sent, in date order, and writes jobs.ndjson.gz (its new
 * members compressed on libuv's thread pool, beside this thread) and
 * jobs.parquet, a row group at a time, so that none of this runs on the
 * build's own thread. Batches are taken one after the other, in order.
 * A job's body is parsed for jobs.parquet only where that file needs it
 * (see ParquetExportFile.addRowGroup).
 */
import { gzip } from 'node:zlib'
import { parentPort, workerData } from 'node:worker_threads'
import { openPackedBodies, type PackedBodies } from '../core/packed-bodies.ts'
import { snapshotPaths } from '../core/snapshot.ts'
import { NdjsonExportWriter, PreviousMembers } from './export-ndjson.ts'
import { ParquetExportFile } from './export-parquet.ts'
import type { ExportsBatch, ExportsThreadFiles, ExportsThreadResult } from './exports-thread.ts'

const files = workerData as ExportsThreadFiles

/** Each member compressed as zlib's gzipSync would (same bytes), on the thread pool. */
function gzipMembers(bytes: Uint8Array, ends: number[], level: number): Promise<Buffer[]> {
  let start = 0
  return Promise.all(
    ends.map((end) => {
      const slice = bytes.subarray(start, end)
      start = end
      return new Promise<Buffer>((resolve, reject) =>
        gzip(slice, { level }, (error, member) => (error ? reject(error) : resolve(member))),
      )
    }),
  )
}

const previousJobs =
  files.ndjson.previous && PreviousMembers.open(files.ndjson.previous.file, files.ndjson.previous.table)
const jobs = new NdjsonExportWriter(
  files.ndjson.file,
  files.ndjson.table,
  gzipMembers,
  previousJobs,
  openPreviousBodies,
)
const parquet = new ParquetExportFile(files.parquet.file, files.parquet.table, files.parquet.previous)
// The row group being gathered: views of the batches' bodies (kept alive until it is written) or the positions of
// the previous snapshot's, and their hashes.
let group: (Uint8Array | number)[] = []
let groupHashes: string[] = []
/** The previous snapshot's packed v2 bodies, opened when a batch first asks for one. */
let previousBodies: PackedBodies | undefined

function openPreviousBodies(): PackedBodies {
  const dir = files.previousBodies
  if (!dir) throw new Error('a job of the previous snapshot was sent, but not where its bodies are')
  previousBodies ??= openPackedBodies(dir, snapshotPaths.v2Bodies)
  return previousBodies
}

async function take({ bytes, ends, runs, hashes }: ExportsBatch): Promise<void> {
  const all = Buffer.from(bytes)
  const hashList = hashes.split('\n')
  let index = 0
  let fresh = 0
  let start = 0
  const addLine = async (line: Uint8Array | number) => {
    await jobs.add(line, hashList[index]!)
    group.push(line)
    groupHashes.push(hashList[index]!)
    index++
    if (group.length >= files.parquetRowGroupRows) {
      parquet.addRowGroup(group, groupHashes, previousBody)
      group = []
      groupHashes = []
    }
  }
  for (let r = 0; r < runs.length; r += 2) {
    const from = runs[r]!
    const count = runs[r + 1]!
    if (from === -1) {
      for (let i = 0; i < count; i++) {
        const end = ends[fresh++]!
        await addLine(all.subarray(start, end))
        start = end
      }
      continue
    }
    // By position: read only where an export needs the bytes (a run or a row group that changed).
    for (let position = from; position < from + count; position++) await addLine(position)
  }
}

/** The previous snapshot's body at `position`. */
const previousBody = (position: number): Buffer => openPreviousBodies().body(position)

async function finish(): Promise<ExportsThreadResult> {
  parquet.addRowGroup(group, groupHashes, previousBody)
  group = []
  groupHashes = []
  const result = { jobs: await jobs.finish(), parquet: parquet.finish() }
  previousJobs?.close()
  previousBodies?.close()
  return result
}

// Messages are taken strictly in order: each waits for the one before.
let queue: Promise<unknown> = Promise.resolve()
parentPort!.on('message', (message: { id: number } & Partial<ExportsBatch>) => {
  queue = queue.then(async () => {
    try {
      if (message.bytes === undefined) {
        parentPort!.postMessage({ id: message.id, result: await finish() })
        return
      }
      await take(message as ExportsBatch)
      parentPort!.postMessage({ id: message.id })
    } catch (error) {
      parentPort!.postMessage({ id: message.id, error: (error as Error).stack ?? String(error) })
    }
  })
})
