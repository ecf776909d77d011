/**
 * The bulk exports as a client uses them, against a running server: the
 * whole jobs.ndjson.gz in one request (seconds, gzip ratio, bytes per job),
 * and a two-column, one-week query of jobs.parquet over HTTP range requests
 * (hyparquet, as an analyst's reader would), counting the bytes served.
 *
 *   npx tsx bench/exports.ts --url http://127.0.0.1:3000   (any running jobsnap)
 */
import { createGunzip } from 'node:zlib'
import { parseArgs } from 'node:util'
import { pathToFileURL } from 'node:url'
import { asyncBufferFromUrl, parquetMetadataAsync, parquetQuery } from 'hyparquet'
import { V2ExportsResponse } from '../core/index.ts'

const WEEK_MS = 7 * 86_400_000

/** One line each: the download, then the Parquet query. */
export async function measureExports(baseUrl: string): Promise<string[]> {
  const index = V2ExportsResponse.parse(await (await fetch(`${baseUrl}/api/v2/exports`)).json())
  const jobs = index.files.find((file) => file.name === 'jobs.ndjson.gz')!
  const parquet = index.files.find((file) => file.name === 'jobs.parquet')!

  // One request, streamed and decompressed as it comes, as a mirror would.
  const started = performance.now()
  const response = await fetch(`${baseUrl}${jobs.url}`)
  let compressed = 0
  let inflated = 0
  const gunzip = createGunzip()
  gunzip.on('data', (chunk: Buffer) => {
    inflated += chunk.length
  })
  const done = new Promise<void>((resolve, reject) => gunzip.once('end', resolve).once('error', reject))
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    compressed += chunk.length
    if (!gunzip.write(chunk)) await new Promise((resolve) => gunzip.once('drain', resolve))
  }
  gunzip.end()
  await done
  const seconds = (performance.now() - started) / 1000
  const pagedRequests = Math.ceil(jobs.rows / 100)
  const download = `Bulk export, jobs.ndjson.gz in one request on loopback: ${seconds.toFixed(2)} s for ${(compressed / 1e6).toFixed(1)} MB (${jobs.rows.toLocaleString('en-US')} jobs, ${(inflated / 1e6).toFixed(0)} MB of NDJSON: gzip ratio ${(inflated / compressed).toFixed(1)}, ${(compressed / jobs.rows).toFixed(0)} bytes per job), decompressed as it came; paging the list 100 at a time is ${pagedRequests.toLocaleString('en-US')} requests, ${(pagedRequests / 60).toFixed(0)} minutes at 60 a minute.`

  // A week in the middle of the posting dates, two columns, over range requests.
  let served = 0
  let requests = 0
  const countingFetch: typeof fetch = async (input, init) => {
    const answer = await fetch(input, init)
    requests++
    if (init?.method !== 'HEAD') served += Number(answer.headers.get('content-length') ?? 0)
    return answer
  }
  const file = await asyncBufferFromUrl({
    url: `${baseUrl}${parquet.url}`,
    byteLength: parquet.bytes,
    fetch: countingFetch,
  })
  const queryStarted = performance.now()
  const metadata = await parquetMetadataAsync(file, { initialFetchSize: 1 << 16 })
  const postedAt = metadata.row_groups.flatMap((group) => {
    const stats = group.columns.find((column) => column.meta_data?.path_in_schema[0] === 'posted_at')?.meta_data
      ?.statistics
    return [stats?.min_value, stats?.max_value].map((value) => (value instanceof Date ? value.getTime() : NaN))
  })
  const from = (Math.min(...postedAt) + Math.max(...postedAt)) / 2
  const rows = await parquetQuery({
    file,
    metadata,
    columns: ['slug', 'posted_at'],
    filter: { posted_at: { $gte: new Date(from), $lt: new Date(from + WEEK_MS) } },
  })
  const queryMs = performance.now() - queryStarted
  const share = served / parquet.bytes
  const query = `Bulk export, jobs.parquet queried over HTTP (hyparquet: slug and posted_at of the jobs posted in one week, ${rows.length.toLocaleString('en-US')} rows): ${requests} range requests, ${(served / 1e3).toFixed(0)} kB of ${(parquet.bytes / 1e6).toFixed(1)} MB read (${(share * 100).toFixed(1)}%), ${queryMs.toFixed(0)} ms; target < 10% of the file: ${share < 0.1 ? 'met' : 'MISSED'}.`
  return [download, query]
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { values } = parseArgs({ options: { url: { type: 'string', default: 'http://127.0.0.1:3000' } } })
  for (const line of await measureExports(values.url!)) console.log(line)
}
