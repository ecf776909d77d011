/**
 * A build worker thread (started by RecordPool): runs BatchProcessor on the
 * batches it is sent and answers with their outcomes.
 */
import { parentPort, workerData } from 'node:worker_threads'
import { BatchProcessor, type BatchContext, type RecordBatch } from './record-batch.ts'

const { spillFd, ...context } = workerData as BatchContext & { spillFd: number }
const processor = new BatchProcessor(context, spillFd)

parentPort!.on('message', (batch: RecordBatch) => {
  try {
    parentPort!.postMessage({ id: batch.id, outcomes: processor.process(batch) })
  } catch (error) {
    parentPort!.postMessage({ id: batch.id, error: (error as Error).stack ?? String(error) })
  }
})
