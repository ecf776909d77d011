/**
 * `jobsnap generate`: a seeded, deterministic dataset that exercises every
 * path of the build: every schedule type, several currencies and periods,
 * jobs without salary, closed and expired jobs, and remote_allowed entries
 * naming a country, a continent or a region (Worldwide included).
 */
import { readFile, rm } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Dataset, generateDataset, loadDataset } from '../../build/index.ts'
import { SCHEDULE_TYPE_VALUES } from '../../core/index.ts'
import { tempDir } from '../support/fixtures.ts'
import { runCli } from '../../support/processes.ts'

const FILES = ['companies.ndjson', 'jobs.ndjson', 'rates.json']
/** The generator's default reference date: postings are dated before it. */
const GENERATOR_NOW = Date.parse('2026-11-22T00:00:00Z')
const OPTIONS = { jobs: 1500, companies: 160 }

let root: string
let seedA: string
let dataset: Dataset

async function filesOf(dir: string): Promise<Record<string, Buffer>> {
  return Object.fromEntries(await Promise.all(FILES.map(async (f) => [f, await readFile(path.join(dir, f))] as const)))
}

beforeAll(async () => {
  root = await tempDir('generate')
  seedA = path.join(root, 'seed-5-a')
  await generateDataset({ ...OPTIONS, seed: 5, outDir: seedA })
  dataset = await loadDataset(seedA)
})
afterAll(async () => {
  await rm(root, { recursive: true, force: true })
})

describe('determinism', () => {
  it('the same seed gives byte-identical files; another seed gives different ones', async () => {
    const again = path.join(root, 'seed-5-b')
    const other = path.join(root, 'seed-6')
    await generateDataset({ ...OPTIONS, seed: 5, outDir: again })
    await generateDataset({ ...OPTIONS, seed: 6, outDir: other })
    const [a, b, c] = await Promise.all([filesOf(seedA), filesOf(again), filesOf(other)])
    for (const file of FILES) expect(a[file]!.equals(b[file]!), `${file}, same seed`).toBe(true)
    expect(a['jobs.ndjson']!.equals(c['jobs.ndjson']!)).toBe(false)
    expect(a['companies.ndjson']!.equals(c['companies.ndjson']!)).toBe(false)
    // Not just one field: the very first records differ.
    const firstLine = (buffer: Buffer) => buffer.toString('utf8').split('\n', 1)[0]
    expect(firstLine(a['jobs.ndjson']!)).not.toBe(firstLine(c['jobs.ndjson']!))
    expect(firstLine(a['companies.ndjson']!)).not.toBe(firstLine(c['companies.ndjson']!))
  })

  it('the CLI writes the same bytes as the library for the same seed', async () => {
    const cliDir = path.join(root, 'cli-seed-5')
    const result = await runCli([
      'generate',
      '--jobs',
      String(OPTIONS.jobs),
      '--companies',
      String(OPTIONS.companies),
      '--seed',
      '5',
      '--out',
      cliDir,
    ])
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toContain(`wrote ${OPTIONS.jobs} jobs and ${OPTIONS.companies} companies`)
    const [lib, cli] = await Promise.all([filesOf(seedA), filesOf(cliDir)])
    for (const file of FILES) expect(cli[file]!.equals(lib[file]!), file).toBe(true)
  })

  it('writes the requested number of valid records', () => {
    expect(dataset.jobs).toHaveLength(OPTIONS.jobs)
    expect(dataset.companies).toHaveLength(OPTIONS.companies)
    expect(new Set(dataset.jobs.map((j) => j.slug)).size).toBe(OPTIONS.jobs)
  })
})

describe('coverage of the dataset contract', () => {
  it('produces every schedule type, in jobs and in companies', () => {
    expect(new Set(dataset.jobs.map((j) => j.schedule_type))).toEqual(new Set(SCHEDULE_TYPE_VALUES))
    expect(new Set(dataset.companies.map((c) => c.schedule_type))).toEqual(new Set(SCHEDULE_TYPE_VALUES))
  })

  it('produces several currencies and every salary period, and jobs without salary', () => {
    const salaried = dataset.jobs.filter((j) => j.salary_currency !== undefined)
    const currencies = new Set(salaried.map((j) => j.salary_currency))
    expect(currencies.size).toBeGreaterThanOrEqual(5)
    for (const currency of ['USD', 'EUR', 'GBP']) expect(currencies).toContain(currency)
    expect(new Set(salaried.map((j) => j.salary_period))).toEqual(new Set(['year', 'month', 'hour']))
    // Ranges, open-ended minimums and maximums.
    expect(salaried.some((j) => j.salary_min !== undefined && j.salary_max !== undefined)).toBe(true)
    expect(salaried.some((j) => j.salary_min !== undefined && j.salary_max === undefined)).toBe(true)
    expect(salaried.some((j) => j.salary_min === undefined && j.salary_max !== undefined)).toBe(true)
    const unpaid = dataset.jobs.filter((j) => j.salary_min === undefined && j.salary_max === undefined)
    expect(unpaid.length).toBeGreaterThan(0)
    expect(unpaid.every((j) => j.salary_currency === undefined && j.salary_period === undefined)).toBe(true)
  })

  it('produces closed jobs, expired jobs and jobs expiring in the future', () => {
    const closed = dataset.jobs.filter((j) => j.status === 'closed')
    const expired = dataset.jobs.filter(
      (j) => j.status === 'live' && j.expires_at !== undefined && Date.parse(j.expires_at) < GENERATOR_NOW,
    )
    const expiring = dataset.jobs.filter((j) => j.expires_at !== undefined && Date.parse(j.expires_at) > GENERATOR_NOW)
    expect(closed.length).toBeGreaterThan(0)
    expect(expired.length).toBeGreaterThan(0)
    expect(expiring.length).toBeGreaterThan(0)
    expect(dataset.jobs.every((j) => Date.parse(j.posted_at) <= GENERATOR_NOW)).toBe(true)
  })

  it('produces remote_allowed by country, by continent and by region, Worldwide included', () => {
    const places = dataset.jobs.flatMap((j) => j.remote_allowed ?? [])
    expect(places.some((p) => p.country !== undefined && p.continent === undefined && p.region === undefined)).toBe(
      true,
    )
    expect(places.some((p) => p.continent !== undefined && p.country === undefined)).toBe(true)
    expect(places.some((p) => p.region === 'Worldwide')).toBe(true)
    expect(places.some((p) => p.region !== undefined && p.region !== 'Worldwide')).toBe(true)
    // Only jobs that are not onsite say where a remote worker may live.
    expect(
      dataset.jobs.filter((j) => j.work_arrangement === 'onsite').every((j) => j.remote_allowed === undefined),
    ).toBe(true)
  })

  it('produces every work arrangement, HTML and plain descriptions, and tags repeated across lists', () => {
    expect(new Set(dataset.jobs.map((j) => j.work_arrangement))).toEqual(new Set(['onsite', 'hybrid', 'remote']))
    expect(dataset.jobs.some((j) => j.description_html !== undefined)).toBe(true)
    expect(dataset.jobs.some((j) => j.description !== undefined)).toBe(true)
    const repeated = dataset.jobs.filter((j) => {
      const skills = new Set((j.skills ?? []).map((t) => t.slug))
      return [...(j.stack ?? []), ...(j.tools ?? [])].some((t) => skills.has(t.slug))
    })
    expect(repeated.length).toBeGreaterThan(0)
  })
})
