/**
 * changed-tags.txt (README, Snapshot layout): the cache tags each publish
 * made stale, beside changed-paths.txt, for `jobsnap purge`: `all` on the
 * first publish, nothing when nothing changed, and exactly
 * each changed job, v1 page and company, `lists` when any of those changed,
 * `docs` when the OpenAPI document did, `exports` when an export file did.
 */
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type BuildResult, buildSnapshot, CHANGED_TAGS_FILE, createProgress } from '../../build/index.ts'
import { PRECOMPUTED_V1_LIMITS } from '../../core/index.ts'
import { build, createDataset, editCompanies, editJobs, readJobIndex, type RefreshDataset } from './support/dataset.ts'

let dataset: RefreshDataset
let clock = Date.parse('2026-11-20T00:00:00Z')
const nextNow = () => {
  clock += 60_000
  return new Date(clock)
}

beforeAll(async () => {
  dataset = await createDataset({ prefix: 'changed-tags', jobs: 160, companies: 20 })
})

afterAll(async () => {
  await dataset?.cleanup()
})

/** The file's lines, checked to be one tag a line, each line ended. */
async function tagsOf(result: BuildResult): Promise<string[]> {
  const text = await readFile(path.join(result.snapshotDir, CHANGED_TAGS_FILE), 'utf8')
  expect(text === '' || text.endsWith('\n')).toBe(true)
  const tags = text.split('\n').filter((line) => line !== '')
  expect(tags).toEqual(result.changedTags)
  return tags
}

/**
 * `docs` and `exports` as the manifests say they changed: the OpenAPI document's examples come from the data
 * (the job shown may be the one edited), and an export changes with any job or company it holds.
 */
function documentTags(before: BuildResult, after: BuildResult): string[] {
  const docs = before.manifest.files['openapi.yaml'] === after.manifest.files['openapi.yaml'] ? [] : ['docs']
  const hashes = (result: BuildResult) => JSON.stringify(result.manifest.exports.map((file) => file.sha256))
  return [...docs, ...(hashes(before) === hashes(after) ? [] : ['exports'])]
}

/** The v1 page tags of the job at date `position`, one per precomputed size. */
const pageTags = (position: number) =>
  PRECOMPUTED_V1_LIMITS.map((limit) => `v1:${limit}:${Math.floor(position / limit) + 1}`)

/** Company slugs by id, from the dataset. */
async function companySlugs(): Promise<Map<string, string>> {
  const lines = (await readFile(path.join(dataset.dataDir, 'companies.ndjson'), 'utf8')).split('\n').filter(Boolean)
  return new Map(lines.map((line) => JSON.parse(line) as { id: string; slug: string }).map((c) => [c.id, c.slug]))
}

describe('changed-tags.txt', () => {
  let previous: BuildResult

  it('purges `all` on the first publish, and nothing when nothing changed', async () => {
    const first = await build(dataset, { now: nextNow() })
    expect(await tagsOf(first)).toEqual(['all'])
    previous = await build(dataset, { now: nextNow() })
    expect(await tagsOf(previous)).toEqual([])
  })

  it('lists one edited job, the v1 pages it sits on and `lists`; no company whose profile is unchanged', async () => {
    const position = 30
    const job = (await readJobIndex(dataset.distDir, previous.snapshotId)).jobs[position]!
    await editJobs(dataset.dataDir, (jobs) => {
      const record = jobs.find((j) => j.id === job.id)!
      record.title = `${record.title} (edited)`
    })
    const before = previous
    previous = await build(dataset, { now: nextNow() })
    expect(documentTags(before, previous)).toContain('exports')
    expect(await tagsOf(previous)).toEqual(
      [`job:${job.slug}`, ...pageTags(position), 'lists', ...documentTags(before, previous)].sort(),
    )
  })

  it('lists a closed job, its company (one live job fewer) and every v1 page after it', async () => {
    const index = await readJobIndex(dataset.distDir, previous.snapshotId)
    const job = index.jobs.at(-1)!
    let companyId = ''
    await editJobs(dataset.dataDir, (jobs) => {
      const record = jobs.find((j) => j.id === job.id)!
      record.status = 'closed'
      companyId = record.company_id as string
    })
    const before = previous
    previous = await build(dataset, { now: nextNow() })
    const tags = await tagsOf(previous)
    const company = (await companySlugs()).get(companyId)!
    // The last job: its page goes or shrinks, and every page's `total` moves.
    const expectedPages = PRECOMPUTED_V1_LIMITS.flatMap((limit) =>
      Array.from({ length: Math.ceil(index.jobs.length / limit) }, (_, i) => `v1:${limit}:${i + 1}`),
    )
    expect(tags).toEqual(
      [`job:${job.slug}`, `company:${company}`, ...expectedPages, 'lists', ...documentTags(before, previous)].sort(),
    )
  })

  it('lists an edited company and `lists`, and no job whose file is unchanged', async () => {
    let slug = ''
    await editCompanies(dataset.dataDir, (companies) => {
      const company = companies[3]!
      company.short_description = 'Edited for the changed-tags test'
      slug = company.slug as string
    })
    previous = await build(dataset, { now: nextNow() })
    const tags = await tagsOf(previous)
    expect(tags).toContain(`company:${slug}`)
    expect(tags).toContain('lists')
    expect(tags.filter((tag) => tag.startsWith('company:'))).toEqual([`company:${slug}`])
  })

  it('lists `docs` when the OpenAPI document changed', async () => {
    const next = await buildSnapshot({
      dataDir: dataset.dataDir,
      distDir: dataset.distDir,
      siteUrl: 'https://elsewhere.example',
      now: nextNow(),
      keepSnapshots: 10,
      progress: createProgress(process.stderr, true),
    })
    const tags = await tagsOf(next)
    expect(tags).toContain('docs')
    expect(tags.some((tag) => tag.startsWith('job:'))).toBe(false)
  })
})
