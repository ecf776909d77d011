/**
 * Signals to a `jobsnap serve` child process (docs/operating.md):
 * SIGHUP reloads `current`; SIGTERM stops accepting, lets in-flight requests
 * finish and exits 0.
 */
import http from 'node:http'
import net from 'node:net'
import { rename, symlink } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { snapshotPaths } from '../../core/index.ts'
import {
  build,
  createDataset,
  readJobIndex,
  readSnapshotFile,
  retitleAll,
  type RefreshDataset,
} from './support/dataset.ts'
import { get, header } from './support/http.ts'
import { killAll, ServerProcess, sleep } from './support/processes.ts'

let dataset: RefreshDataset

beforeAll(async () => {
  dataset = await createDataset({ prefix: 'signals', jobs: 200, companies: 30 })
})

afterAll(async () => {
  await killAll()
  await dataset?.cleanup()
})

async function servedId(server: ServerProcess): Promise<string> {
  const health = await get(`${server.url}/health`)
  return (JSON.parse(health.body.toString('utf8')) as { snapshot_id: string }).snapshot_id
}

describe('SIGHUP', () => {
  it('makes the server reload `current`, even where its file watcher cannot see the change', async () => {
    // The server is given a symlinked dist folder (a deploy layout). Re-pointing that link swaps in a
    // dist whose `current` names another snapshot without touching the folder the watcher watches:
    // only SIGHUP can make the server notice.
    const distA = path.join(dataset.root, 'dist-a')
    const distB = path.join(dataset.root, 'dist-b')
    const distLink = path.join(dataset.root, 'dist-live')
    const a = await build(dataset, { distDir: distA })
    await retitleAll(dataset.dataDir, 1)
    const b = await build(dataset, { distDir: distB })
    await symlink(distA, distLink)
    const server = await ServerProcess.start({ distDir: distLink })
    try {
      expect(await servedId(server)).toBe(a.snapshotId)
      await symlink(distB, `${distLink}.next`)
      await rename(`${distLink}.next`, distLink)
      await sleep(1000)
      expect(await servedId(server), 'nothing but SIGHUP should have moved the server').toBe(a.snapshotId)

      const from = server.logs.length
      server.signal('SIGHUP')
      const loaded = await server.waitForLog((l) => l.message === 'snapshot loaded', 10_000, from)
      expect(loaded.snapshot_id).toBe(b.snapshotId)
      expect(await servedId(server)).toBe(b.snapshotId)
      const slug = (await readJobIndex(distB, b.snapshotId)).jobs[0]!.slug
      const job = await get(`${server.url}/api/v2/jobs/${slug}`)
      expect(job.status).toBe(200)
      expect(header(job, 'x-snapshot-id')).toBe(b.snapshotId)
      expect(job.body.equals(await readSnapshotFile(distB, b.snapshotId, snapshotPaths.v2Job(slug)))).toBe(true)

      // SIGHUP with nothing new: no reload, still serving, still running.
      const quiet = server.logs.length
      server.signal('SIGHUP')
      await sleep(500)
      expect(server.running).toBe(true)
      expect(server.logs.slice(quiet).filter((l) => l.message.startsWith('snapshot'))).toEqual([])
      expect(await servedId(server)).toBe(b.snapshotId)
    } finally {
      await server.stop()
    }
  })
})

/** A raw HTTP/1.1 request whose head is sent in two parts, so it can be in flight across a signal. */
class SplitRequest {
  readonly socket: net.Socket
  private received = Buffer.alloc(0)
  readonly response: Promise<{ status: number; headers: Record<string, string>; body: Buffer }>

  constructor(port: number, requestPath: string) {
    this.socket = net.connect(port, '127.0.0.1')
    this.socket.on('data', (chunk: Buffer) => (this.received = Buffer.concat([this.received, chunk])))
    this.response = new Promise((resolve, reject) => {
      const check = () => {
        const headEnd = this.received.indexOf('\r\n\r\n')
        if (headEnd < 0) return
        const [statusLine, ...lines] = this.received.subarray(0, headEnd).toString('latin1').split('\r\n')
        const headers = Object.fromEntries(
          lines.map((line) => [
            line.slice(0, line.indexOf(':')).toLowerCase(),
            line.slice(line.indexOf(':') + 1).trim(),
          ]),
        )
        const length = Number(headers['content-length'])
        const body = this.received.subarray(headEnd + 4)
        if (Number.isFinite(length) && body.length >= length) {
          resolve({ status: Number(statusLine!.split(' ')[1]), headers, body: body.subarray(0, length) })
          this.socket.end()
        }
      }
      this.socket.on('data', check)
      this.socket.once('error', reject)
      this.socket.once('close', () =>
        reject(
          new Error(
            `connection closed before a whole response arrived (${this.received.length} bytes: ${this.received.subarray(0, 120).toString('latin1')})`,
          ),
        ),
      )
    })
    this.response.catch(() => {})
    this.sent = new Promise((resolve, reject) => {
      this.socket.once('connect', () =>
        this.socket.write(`GET ${requestPath} HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: refresh-test\r\n`, (error) =>
          error ? reject(error) : resolve(),
        ),
      )
      this.socket.once('error', reject)
    })
  }

  /** Resolves once the first part of the head is written. */
  readonly sent: Promise<void>

  /** Sends the blank line that ends the head. */
  finish(): void {
    this.socket.write('\r\n')
  }
}

function refusesConnections(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1')
    socket.once('connect', () => {
      socket.destroy()
      resolve(false)
    })
    socket.once('error', () => resolve(true))
  })
}

describe('SIGTERM', () => {
  it('stops accepting, lets requests in flight finish, and exits 0', async () => {
    const built = await build(dataset)
    // No drain period (test/refresh/operations.test.ts covers it): the port closes at once.
    const server = await ServerProcess.start({ distDir: dataset.distDir, env: { JOBSNAP_DRAIN_MS: '0' } })
    try {
      // An idle keep-alive connection, and requests whose heads have started to arrive.
      const keepAlive = new http.Agent({ keepAlive: true })
      const warm = await get(`${server.url}/api/v1`, { agent: keepAlive })
      expect(warm.status).toBe(200)
      expect(header(warm, 'connection')).toBe('keep-alive')
      const inFlight = Array.from(
        { length: 4 },
        (_, i) => new SplitRequest(server.port, `/api/v1?limit=100&page=${(i % 2) + 1}`),
      )
      await Promise.all(inFlight.map((r) => r.sent))
      // A request on a later connection answered: the server has accepted and read the earlier ones.
      expect((await get(`${server.url}/health`)).status).toBe(200)
      await sleep(200)

      server.signal('SIGTERM')
      await server.waitForLog((l) => l.message === 'shutting down' && l.signal === 'SIGTERM', 5_000)
      await sleep(300)
      expect(server.running, 'the server waits for the requests in flight').toBe(true)
      expect(await refusesConnections(server.port), 'no new connections after SIGTERM').toBe(true)

      for (const request of inFlight) request.finish()
      const responses = await Promise.all(inFlight.map((r) => r.response))
      for (const [i, response] of responses.entries()) {
        expect(response.status).toBe(200)
        expect(response.headers['x-snapshot-id']).toBe(built.snapshotId)
        expect(
          response.body.equals(
            await readSnapshotFile(dataset.distDir, built.snapshotId, snapshotPaths.v1Page(100, (i % 2) + 1)),
          ),
        ).toBe(true)
      }

      const answeredAt = performance.now()
      const exit = await Promise.race([server.exited, sleep(15_000).then(() => undefined)])
      console.log(`SIGTERM: exited ${(performance.now() - answeredAt).toFixed(0)} ms after the last in-flight response`)
      expect(exit, 'exited within 15 s of its last request').toEqual({ code: 0, signal: null })
      keepAlive.destroy()
    } finally {
      await server.stop()
    }
  })
})
