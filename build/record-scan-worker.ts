/**
 * The record scanning thread (started by ScanThread): scans the job files it
 * was given and posts their batches, a few ahead of the build's thread.
 */
import { parentPort, workerData } from 'node:worker_threads'
import { runScanThread } from './record-scan.ts'

await runScanThread(
  workerData,
  (message, transfer) => parentPort!.postMessage(message, transfer),
  (listener) => parentPort!.on('message', listener),
)
parentPort!.close()
