/**
 * Cursor paging over a JobIndex: where a cursor's position falls in this
 * snapshot's sort orders (a binary search: O(log n) reads, whatever the
 * snapshot the cursor was made in), and the cursor of a page's last job.
 * Pure functions.
 */
import type { JobCursor } from '../../core/cursor.ts'
import type { JobIndex } from './job-index.ts'

/** -1, 0 or 1: a before, equal to or after b in code-unit order (the build's tie-break). */
const compareIds = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

/** The first index in [0, size) where `holds` turns false (it holds on a prefix only): a binary search. */
export function firstFailing(size: number, holds: (i: number) => boolean): number {
  let low = 0
  let high = size
  while (low < high) {
    const mid = (low + high) >>> 1
    if (holds(mid)) low = mid + 1
    else high = mid
  }
  return low
}

/** Compares a job (posted_at, id) with a cursor's in date order (newest first, ties by id): <0 before, >0 after. */
function compareByDate(index: JobIndex, position: number, postedAt: number, id: string): number {
  const posted = index.postedAt[position]!
  return posted !== postedAt ? postedAt - posted : compareIds(index.idAt(position), id)
}

/** The first date position after the cursor's job: the position of the next page's first candidate. */
export function dateStart(index: JobIndex, cursor: Extract<JobCursor, { sort: 'date' }>): number {
  return firstFailing(index.size, (p) => compareByDate(index, p, cursor.postedAt, cursor.id) <= 0)
}

/** The first salary rank after the cursor's job (highest salary first, no salary last, then date order). */
export function salaryStart(index: JobIndex, cursor: Extract<JobCursor, { sort: 'salary' }>): number {
  const { salaryHigh } = index.bySalary
  const wanted = cursor.salary ?? NaN
  return firstFailing(index.size, (rank) => {
    const salary = salaryHigh[rank]!
    const noSalary = Number.isNaN(salary)
    const noneWanted = Number.isNaN(wanted)
    if (noSalary !== noneWanted) return noneWanted
    if (!noSalary && salary !== wanted) return salary > wanted
    return compareByDate(index, index.salaryOrder[rank]!, cursor.postedAt, cursor.id) <= 0
  })
}

/** The cursor that continues right after the job at `position`, in `sort` order, for filters tagged `filters`. */
export function jobCursorAt(index: JobIndex, sort: JobCursor['sort'], filters: string, position: number): JobCursor {
  const postedAt = index.postedAt[position]!
  const id = index.idAt(position)
  if (sort === 'date') return { sort, filters, postedAt, id }
  const salary = index.salaryHigh[position]!
  return { sort, filters, salary: Number.isNaN(salary) ? null : salary, postedAt, id }
}
