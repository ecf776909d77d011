/**
 * Validation problems found while reading a dataset. The build collects every
 * one of them before giving up, so the data team fixes a dataset in one pass.
 */
export interface RecordSource {
  /** Path relative to the dataset folder. */
  file: string
  /** 1-based line for NDJSON files. */
  line?: number
  /** 0-based array index for JSON files holding an array. */
  index?: number
}

export interface DatasetIssue {
  source: RecordSource
  /** The record's id, when it has a readable one. */
  recordId?: string
  /** Dotted path of the offending field, e.g. `office_locations.0.country`. */
  field?: string
  message: string
}

function describeSource(source: RecordSource): string {
  if (source.line !== undefined) return `${source.file}:${source.line}`
  if (source.index !== undefined) return `${source.file}[${source.index}]`
  return source.file
}

/** One line per issue: `jobs.ndjson:12 (id 6f1c...) salary_min: greater than salary_max`. */
export function formatIssue(issue: DatasetIssue): string {
  const id = issue.recordId ? ` (id ${issue.recordId})` : ''
  const field = issue.field ? ` ${issue.field}:` : ''
  return `${describeSource(issue.source)}${id}${field} ${issue.message}`
}

export class DatasetInvalidError extends Error {
  constructor(readonly issues: DatasetIssue[]) {
    super(
      `dataset has ${issues.length} problem${issues.length === 1 ? '' : 's'}:\n${issues.map((i) => `  - ${formatIssue(i)}`).join('\n')}`,
    )
    this.name = 'DatasetInvalidError'
  }
}
