/**
 * Reads files the build will need later into the page cache now, in the
 * background: sequentially, 8 MB at a time on libuv's threads, so no
 * JavaScript thread waits on the disk.
 *
 * A rebuild reads the previous snapshot's v1 packed bodies, job index and
 * postings (~2.2 GB at 1M jobs; its v2 bodies too when it copies them), and
 * only after its first pass. Files a build
 * wrote are often out of the page cache by the next one (written once, they
 * are the first the kernel reclaims), and then the build's own thread read
 * its v1 bodies a few hundred KB at a time, waiting on each read: at 1M, 10 s
 * of that thread in a 1% rebuild after the page cache was dropped, against
 * 2 s with it warm. The same bytes read ahead in large reads come at the
 * disk's sequential rate while the first pass runs.
 */
import { open } from 'node:fs/promises'

const READ_BYTES = 8 << 20

/** Reads `files` (absolute paths; missing ones skipped) one after the other until done or stopped. */
export function prefetchFiles(files: readonly string[]): { stop(): void } {
  let stopped = false
  void (async () => {
    const buffer = Buffer.allocUnsafeSlow(READ_BYTES)
    for (const file of files) {
      if (stopped) return
      const handle = await open(file, 'r').catch(() => undefined)
      if (handle === undefined) continue
      try {
        while (!stopped && (await handle.read(buffer, 0, READ_BYTES, null)).bytesRead > 0);
      } catch {
        // Only a hint: the build reads the file itself, and says what is wrong with it then.
      } finally {
        await handle.close().catch(() => {})
      }
    }
  })()
  return {
    stop() {
      stopped = true
    },
  }
}
