/**
 * `jobsnap purge --wait-for <origin>`: a purge sent before jobsnap serves the
 * new snapshot lets the cache fetch the old answers again and keep them for
 * its whole (long) shared lifetime. So the purge first asks each origin's
 * `/ready` until it names the published snapshot: on fresh connections (one
 * per answer, so a `--workers N` origin's processes each get asked), until
 * every process heard from has named it and the last three answers did.
 */
import http from 'node:http'
import https from 'node:https'

export interface OriginWait {
  /** Give up after this long (the purge then sends nothing). */
  timeoutMs: number
  /** Between two asks while the origin does not name the snapshot yet (default 100 ms). */
  intervalMs?: number
}

/** Answers in a row that must name the snapshot, besides every process's latest. */
const CONFIRMATIONS = 3
/** Between two confirmations: long enough for a fresh connection to land on another worker process. */
const CONFIRMATION_INTERVAL_MS = 20

/** `/ready`'s answer: which snapshot the answering process serves, and which process it is. */
function askReady(origin: string): Promise<{ snapshotId?: string; pid?: number }> {
  const url = new URL('/ready', origin)
  const client = url.protocol === 'https:' ? https : http
  return new Promise((resolve) => {
    const request = client.get(url, { agent: false, headers: { connection: 'close' }, timeout: 5_000 }, (response) => {
      const chunks: Buffer[] = []
      response.on('data', (chunk: Buffer) => chunks.push(chunk))
      response.once('end', () => {
        try {
          const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { snapshot_id?: unknown; pid?: unknown }
          resolve({
            snapshotId: typeof body.snapshot_id === 'string' ? body.snapshot_id : undefined,
            pid: typeof body.pid === 'number' ? body.pid : undefined,
          })
        } catch {
          resolve({})
        }
      })
    })
    request.once('timeout', () => request.destroy())
    request.once('error', () => resolve({}))
  })
}

/**
 * Waits until `origin` serves `snapshotId` in every process it answers from;
 * returns false when `timeoutMs` passes first, with the id it last served.
 */
export async function waitForOrigin(
  origin: string,
  snapshotId: string,
  options: OriginWait,
): Promise<{ ready: boolean; lastSeen?: string }> {
  const deadline = Date.now() + options.timeoutMs
  const latestByProcess = new Map<number | undefined, string | undefined>()
  let inARow = 0
  let lastSeen: string | undefined
  for (;;) {
    const { snapshotId: serving, pid } = await askReady(origin)
    lastSeen = serving ?? lastSeen
    latestByProcess.set(pid, serving)
    inARow = serving === snapshotId ? inARow + 1 : 0
    if (inARow >= CONFIRMATIONS && [...latestByProcess.values()].every((id) => id === snapshotId))
      return { ready: true, lastSeen }
    if (Date.now() >= deadline) return { ready: false, lastSeen }
    // Confirmations follow each other quickly; an origin still loading is asked less often.
    const pause = serving === snapshotId ? CONFIRMATION_INTERVAL_MS : (options.intervalMs ?? 100)
    await new Promise((resolve) => setTimeout(resolve, pause))
  }
}
