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
import { NdjsonExportWriter, PreviousMembers } from './export-ndjson.ts'
import { ParquetExportFile } from './export-parquet.ts'
import type { ExportsThreadFiles, ExportsThreadResult } from './exports-thread.ts'

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
const jobs = new NdjsonExportWriter(files.ndjson.file, files.ndjson.table, gzipMembers, previousJobs)
const parquet = new ParquetExportFile(files.parquet.file, files.parquet.table, files.parquet.previous)
// The row group being gathered: views of the batches' bodies (kept alive until it is written) and their hashes.
let group: Uint8Array[] = []
let groupHashes: string[] = []

async function take(bytes: ArrayBuffer, ends: number[], hashes: string): Promise<void> {
  const all = Buffer.from(bytes)
  const hashList = hashes.split('\n')
  let start = 0
  for (const [index, end] of ends.entries()) {
    const line = all.subarray(start, end)
    await jobs.add(line, hashList[index]!)
    group.push(line)
    groupHashes.push(hashList[index]!)
    if (group.length >= files.parquetRowGroupRows) {
      parquet.addRowGroup(group, groupHashes)
      group = []
      groupHashes = []
    }
    start = end
  }
}

async function finish(): Promise<ExportsThreadResult> {
  parquet.addRowGroup(group, groupHashes)
  group = []
  groupHashes = []
  const result = { jobs: await jobs.finish(), parquet: parquet.finish() }
  previousJobs?.close()
  return result
}

// Messages are taken strictly in order: each waits for the one before.
let queue: Promise<unknown> = Promise.resolve()
parentPort!.on('message', (message: { id: number; bytes?: ArrayBuffer; ends?: number[]; hashes?: string }) => {
  queue = queue.then(async () => {
    try {
      if (message.bytes === undefined) {
        parentPort!.postMessage({ id: message.id, result: await finish() })
        return
      }
      await take(message.bytes, message.ends!, message.hashes!)
      parentPort!.postMessage({ id: message.id })
    } catch (error) {
      parentPort!.postMessage({ id: message.id, error: (error as Error).stack ?? String(error) })
    }
  })
})
