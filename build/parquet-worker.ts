/**
 * The Parquet export's thread (started by ParquetThread): parses the v2
 * bodies it is sent, a row group at a time, and writes them to jobs.parquet,
 * so neither the parsing nor the encoding runs on the build's own thread.
 */
import { parentPort, workerData } from 'node:worker_threads'
import type { V2Job } from '../core/schema/api.ts'
import { ParquetExportFile, type PreviousParquet } from './export-parquet.ts'

const data = workerData as { file: string; table: string; previous?: PreviousParquet }
const file = new ParquetExportFile(data.file, data.table, data.previous)

parentPort!.on('message', (message: { id: number; bytes?: ArrayBuffer; ends?: number[] }) => {
  try {
    if (message.bytes === undefined) {
      parentPort!.postMessage({ id: message.id, result: file.finish() })
      return
    }
    const all = Buffer.from(message.bytes)
    let start = 0
    const jobs = message.ends!.map((end) => {
      const job = JSON.parse(all.toString('utf8', start, end)) as V2Job
      start = end
      return job
    })
    file.addRowGroup(jobs)
    parentPort!.postMessage({ id: message.id })
  } catch (error) {
    parentPort!.postMessage({ id: message.id, error: (error as Error).stack ?? String(error) })
  }
})
