/**
 * The REST suites' dataset: the seeded generator's output plus a handful of
 * hand-made records for the edges a random dataset rarely hits (equal
 * posting times written with different offsets, equal salaries, hourly pay
 * without weekly hours, yen, a job without its own schedule, lowercase codes),
 * built into a private snapshot. The oracle reads the same files.
 */
import { buildFixture } from '../../support/fixtures.ts'
import { Oracle, type RawJob } from './oracle.ts'

export interface RestFixture {
  dataDir: string
  distDir: string
  oracle: Oracle
  cleanup(): Promise<void>
}

/** Instants written three ways; all three must sort as one posting time. */
const TIED_POSTED = [
  '2026-11-19T14:00:00+02:00',
  '2026-11-19T12:00:00Z',
  '2026-11-19T12:00:00.000Z',
  '2026-11-19T07:00:00-05:00',
]

function tweakJobs(jobs: RawJob[]): RawJob[] {
  // Only records that are live and never expire are touched, so every edit stays valid and visible.
  const candidates = jobs.filter((j) => j.status === 'live' && j.expires_at === undefined)
  if (candidates.length < 30) throw new Error('fixture too small for the hand-made edge records')
  const take = (() => {
    let next = 0
    return Object.assign(() => candidates[next++]!, { count: () => next })
  })()

  // Four jobs posted at one instant: sort=date orders them by id.
  const tiedDate = TIED_POSTED.map((posted) => {
    const job = take()
    job.posted_at = posted
    return job
  })
  // Equal annual salaries with different posting times: sort=salary puts the newest first.
  const sameSalary = (job: RawJob) => {
    job.salary_currency = 'USD'
    job.salary_period = 'year'
    job.salary_min = 9_000_000
    job.salary_max = 12_345_600
  }
  for (let i = 0; i < 4; i++) sameSalary(take())
  // Two of the date-tied jobs also tie on salary: a full tie.
  sameSalary(tiedDate[0]!)
  sameSalary(tiedDate[1]!)

  // Hourly pay without weekly hours: 40 h x 52 weeks. 50 USD/h -> 104,000.
  const hourlyNoHours = take()
  Object.assign(hourlyNoHours, { salary_currency: 'USD', salary_period: 'hour', salary_min: 5000, salary_max: 5000 })
  delete hourlyNoHours.hours_per_week_min
  delete hourlyNoHours.hours_per_week_max
  // Hourly pay with 32 weekly hours: 50 x 32 x 52 = 83,200.
  const hourly32 = take()
  Object.assign(hourly32, { salary_currency: 'USD', salary_period: 'hour', salary_min: 5000, hours_per_week_max: 32 })
  delete hourly32.salary_max
  delete hourly32.hours_per_week_min
  // Monthly yen (no minor unit): 500,000 JPY x 0.0067 x 12 = 40,200 USD.
  const yen = take()
  Object.assign(yen, { salary_currency: 'JPY', salary_period: 'month', salary_max: 500_000 })
  delete yen.salary_min
  // Only a top of range: both salary filters use it.
  const onlyTop = take()
  Object.assign(onlyTop, { salary_currency: 'EUR', salary_period: 'year', salary_max: 7_000_000 })
  delete onlyTop.salary_min

  // Jobs without their own schedule take their employer's (data/README.md).
  for (let i = 0; i < 3; i++) delete take().schedule_type

  // Places written as lowercase codes and names.
  const berlin = take()
  berlin.work_arrangement = 'hybrid'
  berlin.office_locations = [{ city: 'Berlin', country: 'de' }]
  berlin.remote_allowed = [{ region: 'emea' }]
  const remoteKe = take()
  remoteKe.work_arrangement = 'remote'
  delete remoteKe.office_locations
  remoteKe.remote_allowed = [{ country: 'kenya' }, { continent: 'south america' }]
  const apac = take()
  apac.work_arrangement = 'remote'
  delete apac.office_locations
  apac.remote_allowed = [{ region: 'APAC' }]
  const turkey = take()
  turkey.work_arrangement = 'onsite'
  turkey.office_locations = [{ city: 'Ankara', country: 'TR' }]
  delete turkey.remote_allowed

  // One employer with no live job left (every job closed), none of whose jobs was edited above:
  // a company is listed only while it has a live job.
  const edited = new Set(candidates.slice(0, take.count()).map((job) => job.company_id))
  const gone = jobs.find((job) => !edited.has(job.company_id))!.company_id
  for (const job of jobs) if (job.company_id === gone) job.status = 'closed'
  return jobs
}

/** Generates, edits and builds a dataset in a fresh temporary folder. */
export async function buildRestFixture(
  options: { jobs?: number; companies?: number; seed?: number } = {},
): Promise<RestFixture> {
  const fixture = await buildFixture({
    prefix: 'rest',
    seed: 7,
    ...options,
    editJobs: (jobs) => {
      // The generator writes every field the oracle's record type names.
      tweakJobs(jobs as unknown as RawJob[])
    },
  })
  const oracle = await Oracle.load(fixture.dataDir)
  return { dataDir: fixture.dataDir, distDir: fixture.distDir, oracle, cleanup: fixture.cleanup }
}
