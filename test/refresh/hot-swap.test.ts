/**
 * Refresh without downtime (docs/operating.md):
 * a `jobsnap serve` child process under steady load while `jobsnap build`
 * publishes three new snapshots; corrupted snapshots refused; `jobsnap
 * rollback` followed by a running server.
 */
import { createHash } from 'node:crypto'
import { watch } from 'node:fs'
import { cp, readFile, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import autocannon from 'autocannon'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { pointCurrentAt } from '../../build/index.ts'
import {
  CURRENT_LINK,
  indexFileHash,
  JobIndexFileWriter,
  publishedSnapshotId,
  type SnapshotJobIndex,
  snapshotPaths,
} from '../../core/index.ts'
import {
  build,
  createDataset,
  readJobIndex,
  readSnapshotFile,
  retitleAll,
  snapshotDir,
  type RefreshDataset,
} from './support/dataset.ts'
import { get, header, percentile } from './support/http.ts'
import { runCli } from '../../support/processes.ts'
import { eventually, killAll, ServerProcess, sleep } from './support/processes.ts'

/** The longest a request overlapping a swap may take (ms); see the swap-pause assertion. */
const SWAP_PAUSE_BOUND_MS = 1_500
const SERVER_ENV = { JOBSNAP_REST_LIMIT: '1000000', JOBSNAP_KEEP_SNAPSHOTS: '10' }

let dataset: RefreshDataset
let server: ServerProcess
let revision = 0

async function servedId(): Promise<string> {
  const health = await get(`${server.url}/health`)
  expect(health.status).toBe(200)
  return (JSON.parse(health.body.toString('utf8')) as { snapshot_id: string }).snapshot_id
}

beforeAll(async () => {
  dataset = await createDataset({ prefix: 'hot-swap' })
  await build(dataset)
  server = await ServerProcess.start({ distDir: dataset.distDir, env: SERVER_ENV })
})

afterAll(async () => {
  await killAll()
  await dataset?.cleanup()
})

/** What the load asks for: single jobs and v1 pages (snapshot files as they are), and v2 lists (composed from them). */
interface Target {
  path: string
  expected(id: string): Promise<Buffer>
}

function fileTarget(urlPath: string, file: string): Target {
  return { path: urlPath, expected: (id) => readSnapshotFile(dataset.distDir, id, file) }
}

/** A v2 list's exact bytes for a snapshot: its first `limit` jobs in the order the index gives, stitched from the job files. */
function listTarget(limit: number, sort: 'date' | 'salary'): Target {
  return {
    path: `/api/v2/jobs?limit=${limit}${sort === 'salary' ? '&sort=salary' : ''}`,
    async expected(id) {
      const index = await readJobIndex(dataset.distDir, id)
      const positions =
        sort === 'salary' ? index.salary_order.slice(0, limit) : index.jobs.slice(0, limit).map((_, i) => i)
      const jobs = await Promise.all(
        positions.map((p) => readSnapshotFile(dataset.distDir, id, snapshotPaths.v2Job(index.jobs[p]!.slug))),
      )
      const total = index.jobs.length
      return Buffer.from(
        `{"data":[${jobs.map((j) => j.toString('utf8')).join(',')}],"page":1,"limit":${limit},"total":${total},"has_more":${limit < total}}`,
      )
    },
  }
}

/** One response as autocannon reported it. */
interface Answer {
  target: number
  status: number
  snapshotId: string | undefined
  /** sha256 of the body; the text is in `bodies`. */
  bodyHash: string
  startedAt: number
  endedAt: number
}

const isAscii = (bytes: Buffer) => bytes.every((b) => b < 0x80)

describe('three rebuilds under steady load', () => {
  it('fails no request, and every response is wholly from the snapshot its X-Snapshot-Id names', {
    timeout: 150_000,
  }, async () => {
    const distDir = dataset.distDir
    const ids = [await servedId()]
    expect(await publishedSnapshotId(distDir)).toBe(ids[0])
    const index = await readJobIndex(distDir, ids[0]!)
    const step = Math.floor(index.jobs.length / 40)
    const candidates: Target[] = [
      ...Array.from({ length: 40 }, (_, i) => index.jobs[i * step]!.slug).map((slug) =>
        fileTarget(`/api/v2/jobs/${slug}`, snapshotPaths.v2Job(slug)),
      ),
      ...Array.from({ length: Math.ceil(index.jobs.length / 25) }, (_, i) =>
        fileTarget(i === 0 ? '/api/v1' : `/api/v1?page=${i + 1}`, snapshotPaths.v1Page(25, i + 1)),
      ),
      ...Array.from({ length: Math.ceil(index.jobs.length / 100) }, (_, i) =>
        fileTarget(`/api/v1?page=${i + 1}&limit=100`, snapshotPaths.v1Page(100, i + 1)),
      ),
      ...[5, 10, 20].flatMap((limit) => [listTarget(limit, 'date'), listTarget(limit, 'salary')]),
    ]
    // autocannon hands onResponse a body decoded chunk by chunk (`body += buffer`), so a multi-byte
    // character split between two TCP reads arrives garbled. Only bodies that are ASCII in every
    // snapshot can be compared exactly; the rebuilds change titles only, so the first snapshot decides.
    const targets: Target[] = []
    for (const candidate of candidates) if (isAscii(await candidate.expected(ids[0]!))) targets.push(candidate)
    const kinds = (prefix: string) => targets.filter((t) => t.path.startsWith(prefix)).length
    expect(kinds('/api/v2/jobs/'), 'ASCII-only single jobs in the fixture').toBeGreaterThanOrEqual(20)
    expect(kinds('/api/v1'), 'ASCII-only v1 pages in the fixture').toBeGreaterThanOrEqual(2)
    expect(kinds('/api/v2/jobs?'), 'ASCII-only v2 lists in the fixture').toBeGreaterThanOrEqual(2)

    // When `current` flips, as this process sees it.
    const publishedAt: number[] = []
    const watcher = watch(distDir, (_event, file) => {
      if (file === CURRENT_LINK) publishedAt.push(performance.now())
    })
    const answers: Answer[] = []
    const bodies = new Map<string, string>()
    const firstSeen = new Map<string, Answer>()
    const connectionErrors: string[] = []
    // onResponse and the instance's 'response' event fire back to back for the same request.
    let pending: Omit<Answer, 'startedAt' | 'endedAt'> | undefined

    let finished!: Promise<autocannon.Result>
    const instance = await new Promise<autocannon.Instance>((resolveInstance) => {
      finished = new Promise((resolve, reject) => {
        const started = autocannon(
          {
            url: server.url,
            connections: 8,
            pipelining: 1,
            duration: 100, // a bound; stopped once the third swap has been seen
            timeout: 20,
            requests: targets.map((target, i) => ({
              method: 'GET' as const,
              path: target.path,
              onResponse: (
                status: number,
                body: string,
                _context: object,
                headers: Record<string, string | string[] | undefined> | undefined,
              ) => {
                const snapshotHeader = Object.entries(headers ?? {}).find(
                  ([name]) => name.toLowerCase() === 'x-snapshot-id',
                )?.[1]
                const bodyHash = createHash('sha256').update(body).digest('hex')
                if (!bodies.has(bodyHash)) bodies.set(bodyHash, body)
                pending = {
                  target: i,
                  status,
                  snapshotId: typeof snapshotHeader === 'string' ? snapshotHeader : undefined,
                  bodyHash,
                }
              },
            })),
          },
          (error, result) => (error ? reject(error) : resolve(result)),
        )
        resolveInstance(started)
      })
    })
    const onResponse = (...args: unknown[]) => {
      const responseTime = args[3] as number
      const endedAt = performance.now()
      if (!pending) return
      const answer: Answer = { ...pending, startedAt: endedAt - responseTime, endedAt }
      pending = undefined
      answers.push(answer)
      if (answer.snapshotId && !firstSeen.has(answer.snapshotId)) firstSeen.set(answer.snapshotId, answer)
    }
    instance.on('response', onResponse as () => void)
    instance.on('reqError', (error: Error) => connectionErrors.push(error.message))

    const builds: { startedAt: number; publishedAt: number | undefined; id: string }[] = []
    let result: autocannon.Result
    try {
      await sleep(1000) // steady state before the first swap
      for (let rebuild = 1; rebuild <= 3; rebuild++) {
        await retitleAll(dataset.dataDir, ++revision)
        const startedAt = performance.now()
        const published = publishedAt.length
        const built = await runCli(['build', '--data', dataset.dataDir, '--out', distDir, '--quiet'], {
          env: SERVER_ENV,
        })
        expect(built.code, built.stderr).toBe(0)
        const id = /published snapshot (\S+):/.exec(built.stdout)?.[1]
        expect(id, built.stdout).toBeDefined()
        ids.push(id!)
        builds.push({ startedAt, publishedAt: publishedAt[published], id: id! })
        // The server follows within a moment, under load.
        await eventually(() => (firstSeen.has(id!) ? true : undefined), 15_000, `server answering from snapshot ${id}`)
        await sleep(500)
      }
    } finally {
      watcher.close()
      instance.stop()
      result = await finished
    }

    // Zero failed requests: no connection error or timeout, nothing but 200.
    expect(connectionErrors.slice(0, 5)).toEqual([])
    expect({ errors: result.errors, timeouts: result.timeouts, non2xx: result.non2xx, resets: result.resets }).toEqual({
      errors: 0,
      timeouts: 0,
      non2xx: 0,
      resets: 0,
    })
    const failed = answers.filter((a) => a.status !== 200)
    expect(failed.slice(0, 5), `${failed.length} of ${answers.length} responses were not 200`).toEqual([])
    expect(answers.length).toBeGreaterThan(500)

    // Every response names one of the published snapshots, and each new one was served.
    const seenIds = new Set(answers.map((a) => a.snapshotId))
    expect([...seenIds].sort()).toEqual([...ids].sort())

    // The bodies differ from snapshot to snapshot, so the comparison below tells them apart.
    const expected = new Map<string, string>()
    for (const [t, target] of targets.entries()) {
      const distinct = new Set<string>()
      for (const id of ids) {
        const text = (await target.expected(id)).toString('utf8')
        expected.set(`${t}|${id}`, text)
        distinct.add(text)
      }
      expect(distinct.size, `${target.path} differs per snapshot`).toBe(ids.length)
    }

    // Wholly from one snapshot: each body is exactly what the named snapshot's files make.
    const checked = new Set<string>()
    for (const answer of answers) {
      const key = `${answer.target}|${answer.snapshotId}|${answer.bodyHash}`
      if (checked.has(key)) continue
      checked.add(key)
      // A list page ends with its next_cursor, which encodes the last job's sort key: checked by the cursor
      // suites; here the rest of the page must be the snapshot's bytes.
      const body = bodies.get(answer.bodyHash)!.replace(/,"next_cursor":(?:"[\w.-]+"|null)\}$/, '}')
      expect(
        body === expected.get(`${answer.target}|${answer.snapshotId}`),
        `${targets[answer.target]!.path} answered by ${answer.snapshotId}: body is not that snapshot's (got ${body.slice(0, 160)}...)`,
      ).toBe(true)
    }

    // One step: once a response came from snapshot k, no request started later is answered by an older one.
    for (const [k, id] of ids.entries()) {
      const switchedAt = firstSeen.get(id)!.endedAt
      const older = answers.filter((a) => a.startedAt > switchedAt && ids.indexOf(a.snapshotId!) < k)
      expect(
        older.map((a) => a.snapshotId).slice(0, 3),
        `requests started after ${id} answered were answered by an older snapshot`,
      ).toEqual([])
    }

    // The server logged each load.
    for (const id of ids.slice(1))
      expect(server.logs.some((l) => l.message === 'snapshot loaded' && l.snapshot_id === id)).toBe(true)

    // The swap pause: the longest request overlapping [publish, first answer from the new snapshot + 250 ms].
    const latency = (a: Answer) => a.endedAt - a.startedAt
    const windows = builds.map((b) => ({
      from: b.publishedAt ?? b.startedAt,
      to: firstSeen.get(b.id)!.endedAt + 250,
      buildFrom: b.startedAt,
    }))
    const inWindow = (a: Answer, from: number, to: number) => a.startedAt < to && a.endedAt > from
    const perSwap = windows.map((w) => Math.max(0, ...answers.filter((a) => inWindow(a, w.from, w.to)).map(latency)))
    const followMs = builds.map((b, i) => firstSeen.get(b.id)!.endedAt - windows[i]!.from)
    const quiet = answers.filter((a) => !windows.some((w) => inWindow(a, w.buildFrom, w.to))).map(latency)
    const duringBuilds = answers.filter((a) => windows.some((w) => inWindow(a, w.buildFrom, w.from))).map(latency)
    const ms = (n: number) => `${n.toFixed(1)} ms`
    console.log(
      [
        `hot swap under load (autocannon, 8 keep-alive connections, ${targets.length} URLs): ${answers.length} requests, ${ids.length - 1} swaps, 0 failed; overall latency max ${ms(result.latency.max)}`,
        `  swap pause (longest request overlapping publish -> first answer from the new snapshot + 250 ms): ${perSwap.map(ms).join(' / ')}; max ${ms(Math.max(...perSwap))}`,
        `  publish -> first answer from the new snapshot: ${followMs.map(ms).join(' / ')}`,
        `  while \`jobsnap build\` ran beside the server: p50 ${ms(percentile(duringBuilds, 50))}, p99 ${ms(percentile(duringBuilds, 99))}, max ${ms(Math.max(0, ...duringBuilds))}`,
        `  quiet (no build, no swap): p50 ${ms(percentile(quiet, 50))}, p99 ${ms(percentile(quiet, 99))}, max ${ms(Math.max(0, ...quiet))}`,
      ].join('\n'),
    )
    // A swap loads the new snapshot in slices between requests, so no request around one waits anywhere
    // near this long; the bound is loose for a busy shared 2-core machine, and still broken by a load that
    // blocks the event loop for the whole snapshot or a swap that holds requests until it is done.
    expect(Math.max(...perSwap), 'the longest request overlapping a swap, ms').toBeLessThan(SWAP_PAUSE_BOUND_MS)
  })
})

describe('a corrupted snapshot', () => {
  const rewriteManifest = async (dir: string, change: (manifest: Record<string, unknown>) => void) => {
    const file = path.join(dir, snapshotPaths.manifest)
    const manifest = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>
    change(manifest)
    await writeFile(file, JSON.stringify(manifest))
  }
  /** As a snapshot built before index/jobs.bin existed: the server reads index/jobs.json. */
  const withoutBinaryIndex = async (dir: string) => {
    await rm(path.join(dir, snapshotPaths.jobIndexBinary))
    await rewriteManifest(dir, (manifest) => {
      delete (manifest.index_hashes as Record<string, string>)[snapshotPaths.jobIndexBinary]
    })
  }
  const corruptions: [string, string, (dir: string) => Promise<void>][] = [
    [
      'index/jobs.bin cut short',
      'index/jobs.bin does not match the hash in the manifest',
      async (dir) => {
        const file = path.join(dir, snapshotPaths.jobIndexBinary)
        const bytes = await readFile(file)
        await writeFile(file, bytes.subarray(0, Math.floor(bytes.length / 2)))
      },
    ],
    [
      'index/jobs.bin holding fewer jobs than the manifest counts',
      'index has',
      async (dir) => {
        const index = JSON.parse(await readFile(path.join(dir, snapshotPaths.jobIndex), 'utf8')) as SnapshotJobIndex
        const writer = new JobIndexFileWriter(index.jobs.length - 1)
        for (const job of index.jobs.slice(0, -1)) writer.add(job)
        const body = Buffer.concat(writer.finish(index.salary_order.filter((p) => p < index.jobs.length - 1)))
        await writeFile(path.join(dir, snapshotPaths.jobIndexBinary), body)
        // With a matching hash, so the count check itself is what refuses it.
        await rewriteManifest(dir, (manifest) => {
          ;(manifest.index_hashes as Record<string, string>)[snapshotPaths.jobIndexBinary] = indexFileHash(body)
        })
      },
    ],
    [
      'index/jobs.json cut short',
      'index/jobs.json',
      async (dir) => {
        await withoutBinaryIndex(dir)
        const file = path.join(dir, snapshotPaths.jobIndex)
        const bytes = await readFile(file)
        await writeFile(file, bytes.subarray(0, Math.floor(bytes.length / 2)))
      },
    ],
    [
      'a job in index/jobs.json without its slug',
      'does not match the hash in the manifest',
      async (dir) => {
        await withoutBinaryIndex(dir)
        const file = path.join(dir, snapshotPaths.jobIndex)
        const index = JSON.parse(await readFile(file, 'utf8')) as { jobs: Record<string, unknown>[] }
        delete index.jobs[7]!.slug
        await writeFile(file, JSON.stringify(index))
      },
    ],
    [
      'a snapshot without index hashes (older builds): its index is checked against the schema',
      'jobs.7.slug',
      async (dir) => {
        const file = path.join(dir, snapshotPaths.jobIndex)
        const index = JSON.parse(await readFile(file, 'utf8')) as { jobs: Record<string, unknown>[] }
        delete index.jobs[7]!.slug
        await writeFile(file, JSON.stringify(index))
        await rewriteManifest(dir, (manifest) => delete manifest.index_hashes)
      },
    ],
    [
      'manifest.json failing its schema',
      'manifest.json',
      async (dir) => {
        const file = path.join(dir, snapshotPaths.manifest)
        const manifest = JSON.parse(await readFile(file, 'utf8')) as { counts: Record<string, unknown> }
        manifest.counts.live_jobs = 'many'
        await writeFile(file, JSON.stringify(manifest))
      },
    ],
    [
      'index/jobs.json holding fewer jobs than the manifest counts',
      'index has',
      async (dir) => {
        await withoutBinaryIndex(dir)
        const file = path.join(dir, snapshotPaths.jobIndex)
        const index = JSON.parse(await readFile(file, 'utf8')) as { jobs: unknown[]; salary_order: number[] }
        index.jobs.pop()
        index.salary_order = index.salary_order.filter((p) => p < index.jobs.length)
        const body = JSON.stringify(index)
        await writeFile(file, body)
        // With a matching hash, so the count check itself is what refuses it.
        await rewriteManifest(dir, (manifest) => {
          ;(manifest.index_hashes as Record<string, string>)[snapshotPaths.jobIndex] = indexFileHash(body)
        })
      },
    ],
  ]

  it('is refused with a log line; the old snapshot keeps serving; the next good one is taken', async () => {
    const distDir = dataset.distDir
    const before = await servedId()
    const slug = (await readJobIndex(distDir, before)).jobs[3]!.slug
    const beforeBody = await readSnapshotFile(distDir, before, snapshotPaths.v2Job(slug))

    // A good snapshot built elsewhere, then copied in under other names and damaged.
    await retitleAll(dataset.dataDir, ++revision)
    const scratch = path.join(dataset.root, 'scratch-dist')
    // With the index/jobs.json of older builds, which some of the damage is done to.
    const good = await build(dataset, { distDir: scratch, legacyJobIndex: true })
    const badNames: string[] = []
    try {
      for (const [i, [what, mentions, corrupt]] of corruptions.entries()) {
        const name = `${good.snapshotId}-bad${i}`
        badNames.push(name)
        await cp(good.snapshotDir, snapshotDir(distDir, name), { recursive: true })
        await corrupt(snapshotDir(distDir, name))
        const from = server.logs.length
        await pointCurrentAt(distDir, name)
        const refusal = await server.waitForLog((l) => l.message.includes('refused'), 10_000, from)
        expect(refusal.snapshot_id, what).toBe(before)
        expect(String(refusal.error), what).toContain(name)
        expect(String(refusal.error), what).toContain(mentions)
        // Still the old snapshot, answering in full.
        expect(await servedId(), what).toBe(before)
        const job = await get(`${server.url}/api/v2/jobs/${slug}`)
        expect(job.status, what).toBe(200)
        expect(header(job, 'x-snapshot-id'), what).toBe(before)
        expect(job.body.equals(beforeBody), what).toBe(true)
        expect(
          server.logs.slice(from).some((l) => l.message === 'snapshot loaded'),
          what,
        ).toBe(false)
      }

      // The refusals did not stop the server following `current`.
      await cp(good.snapshotDir, snapshotDir(distDir, good.snapshotId), { recursive: true })
      const from = server.logs.length
      await pointCurrentAt(distDir, good.snapshotId)
      await server.waitForLog((l) => l.message === 'snapshot loaded' && l.snapshot_id === good.snapshotId, 10_000, from)
      const job = await get(`${server.url}/api/v2/jobs/${slug}`)
      expect(header(job, 'x-snapshot-id')).toBe(good.snapshotId)
      expect(job.body.equals(await readSnapshotFile(distDir, good.snapshotId, snapshotPaths.v2Job(slug)))).toBe(true)
      expect(job.body.equals(beforeBody)).toBe(false)
    } finally {
      for (const name of badNames) await rm(snapshotDir(distDir, name), { recursive: true, force: true })
    }
  })
})

describe('publishes in quick succession', () => {
  it('leave the server on the snapshot `current` names last, and keep it there', async () => {
    const distDir = dataset.distDir
    // Three good snapshots on disk.
    const ids: string[] = []
    for (let i = 0; i < 3; i++) {
      await retitleAll(dataset.dataDir, ++revision)
      ids.push((await build(dataset)).snapshotId)
    }
    const settleOn = (id: string, what: string) =>
      eventually(async () => ((await servedId()) === id ? true : undefined), 10_000, what)
    await settleOn(ids[2]!, 'server on the last build')
    // How long publishing one snapshot takes to reach the server, so the second publish of a pair can be
    // timed to land while the server is still loading the first (the moment a server could drop it).
    const started = Date.now()
    await pointCurrentAt(distDir, ids[0]!)
    await settleOn(ids[0]!, 'server on a republished snapshot')
    const followMs = Date.now() - started
    const delays = [0, 1, 2, 5, 10, 20, 40, Math.round(followMs / 2), followMs, 0, 5, 20]
    for (const [i, delay] of delays.entries()) {
      // Two kinds of round. Even: the pair goes to two snapshots other than the served one, so neither
      // publish is a no-op and the server cannot pass by staying where it was. Odd: the pair goes away
      // and straight back (a quick rollback), so the second publish names the snapshot being served,
      // and a server that let the first publish's load finish last would end on the wrong one.
      const [before, first, last] =
        i % 2 === 0
          ? [ids[i % 3]!, ids[(i + 1) % 3]!, ids[(i + 2) % 3]!]
          : [ids[i % 3]!, ids[(i + 1) % 3]!, ids[i % 3]!]
      await pointCurrentAt(distDir, before)
      await settleOn(before, `round ${i}: server back on ${before}`)
      await pointCurrentAt(distDir, first)
      await sleep(delay)
      await pointCurrentAt(distDir, last)
      await settleOn(last, `round ${i} (${delay} ms apart): server on ${last}, which current names last`)
      // And it stays there: a late reload of the first publish must not take the server back to it.
      for (let k = 0; k < 5; k++) {
        await sleep(60)
        expect(await servedId(), `round ${i} (${delay} ms apart), ${60 * (k + 1)} ms after settling`).toBe(last)
      }
    }
  })
})

describe('jobsnap rollback', () => {
  it('republishes the previous snapshot and a running server follows it', async () => {
    const distDir = dataset.distDir
    // Two builds in a row: the first is the one to go back to.
    await retitleAll(dataset.dataDir, ++revision)
    const previous = (await build(dataset)).snapshotId
    await retitleAll(dataset.dataDir, ++revision)
    const latest = await build(dataset)
    await eventually(
      async () => ((await servedId()) === latest.snapshotId ? true : undefined),
      10_000,
      'server on the new build',
    )

    const result = await runCli(['rollback', '--out', distDir])
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toContain(`from ${latest.snapshotId} to ${previous}`)
    expect(await publishedSnapshotId(distDir)).toBe(previous)

    await eventually(
      async () => ((await servedId()) === previous ? true : undefined),
      10_000,
      'server following the rollback',
    )
    const slug = (await readJobIndex(distDir, previous)).jobs[0]!.slug
    const job = await get(`${server.url}/api/v2/jobs/${slug}`)
    expect(header(job, 'x-snapshot-id')).toBe(previous)
    expect(job.body.equals(await readSnapshotFile(distDir, previous, snapshotPaths.v2Job(slug)))).toBe(true)
    expect(job.body.equals(await readSnapshotFile(distDir, latest.snapshotId, snapshotPaths.v2Job(slug)))).toBe(false)
  })

  it('fails, changing nothing, when there is no older snapshot', async () => {
    const lone = await createDataset({ prefix: 'rollback-lone', jobs: 40, companies: 8 })
    try {
      const only = await build(lone)
      const result = await runCli(['rollback', '--out', lone.distDir])
      expect(result.code).toBe(1)
      expect(result.stderr).toContain('rollback failed')
      expect(await publishedSnapshotId(lone.distDir)).toBe(only.snapshotId)
    } finally {
      await lone.cleanup()
    }
  })
})
