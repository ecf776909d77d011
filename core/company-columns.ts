/**
 * index/company-columns.json: the fields of index/companies.json that a server
 * holds in arrays (what the company queries filter and sort on), a column per
 * line, so that a server loads them without parsing every company's 900 bytes
 * of JSON: at 1M jobs (50,000 companies, 46 MB) that parse was ~0.45 s of each
 * worker's start. The first line names the columns; each next line is one
 * column's JSON array, in the order of companies.json's lines (null where a
 * company has no value). Lines, not one document, so a server can yield to
 * requests between them during a hot swap.
 */
import type { IndexedCompany } from './snapshot.ts'

/** The columns, in the order of their lines. */
const COMPANY_COLUMN_NAMES = [
  'id',
  'slug',
  'name',
  'short_description',
  'country',
  'schedule_type',
  'remote_level',
  'hires_worldwide',
  'work_life_score',
  'hours_full_time',
] as const satisfies readonly (keyof IndexedCompany)[]

type ColumnName = (typeof COMPANY_COLUMN_NAMES)[number]

/** One company as its columns give it: the fields a server's company table holds. */
export type CompanyColumnsRow = Pick<IndexedCompany, ColumnName>

/** The file's text for `companies`, in their order. */
export function serializeCompanyColumns(companies: readonly IndexedCompany[]): string {
  const lines = [JSON.stringify(COMPANY_COLUMN_NAMES)]
  for (const name of COMPANY_COLUMN_NAMES) lines.push(JSON.stringify(companies.map((company) => company[name] ?? null)))
  return `${lines.join('\n')}\n`
}

/**
 * Parses the file a column at a time, awaiting `between` after each (a server yields to requests there), and
 * gives the companies' rows in order; throws naming what is wrong when the layout is not this one or a
 * column's length is not `count`.
 */
export async function parseCompanyColumns(
  text: string,
  count: number,
  between: () => Promise<void>,
): Promise<CompanyColumnsRow[]> {
  const lines = text.split('\n')
  if (lines.at(-1) === '') lines.pop()
  const header = lines[0] === undefined ? undefined : (JSON.parse(lines[0]) as unknown)
  if (
    JSON.stringify(header) !== JSON.stringify(COMPANY_COLUMN_NAMES) ||
    lines.length !== COMPANY_COLUMN_NAMES.length + 1
  )
    throw new Error(`expected the columns ${COMPANY_COLUMN_NAMES.join(', ')}, a line each`)
  const rows: Record<string, unknown>[] = Array.from({ length: count }, () => ({}))
  for (const [index, name] of COMPANY_COLUMN_NAMES.entries()) {
    const values = JSON.parse(lines[index + 1]!) as unknown
    if (!Array.isArray(values) || values.length !== count)
      throw new Error(
        `column ${name} holds ${Array.isArray(values) ? values.length : 'no'} values for ${count} companies`,
      )
    for (let i = 0; i < count; i++) if (values[i] !== null) rows[i]![name] = values[i]
    await between()
  }
  return rows as CompanyColumnsRow[]
}
