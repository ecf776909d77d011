/**
 * The printed result: one markdown table per dataset (scenario | server |
 * req/s | p50 ms | p99 ms | errors | reference req/s | ratio | target) and
 * the build, ready-time and RSS lines under it. Targets are printed next to
 * the figures, never asserted: the exit code says only whether the run ran.
 */
import type { LoadResult } from './load.ts'

export interface Target {
  /** e.g. "≥ 0.5× nginx". */
  text: string
  /** undefined: nothing to judge (e.g. the reference is missing). */
  met: boolean | undefined
}

export interface ScenarioRow {
  scenario: string
  server: string
  result?: LoadResult
  /** Why there is no result (a missing server, a failed run). */
  skipped?: string
  reference?: { name: string; result?: LoadResult; skipped?: string }
  targets: Target[]
  isReference?: boolean
}

export interface SectionFacts {
  title: string
  rows: ScenarioRow[]
  lines: string[]
}

/** Below this many responses a rate is shown with its count: a handful of slow responses make a rough figure. */
const FEW_RESPONSES = 50

/** A load generator this busy (in cores) limits the rate it measures: the figure is a lower bound. */
export const GENERATOR_BOUND = 0.85

const clientBound = (result: LoadResult | undefined) =>
  result?.cpu && result.cpu.generator >= GENERATOR_BOUND ? ' (client-bound)' : ''

const group = (n: number) => Math.round(n).toLocaleString('en-US')

function formatRate(n: number | undefined): string {
  if (n === undefined || !Number.isFinite(n)) return '–'
  return n < 100 ? n.toFixed(1) : group(n)
}

export function formatMs(n: number | undefined): string {
  if (n === undefined || !Number.isFinite(n)) return '–'
  return n < 10 ? n.toFixed(2) : n < 100 ? n.toFixed(1) : group(n)
}

function formatRatio(n: number | undefined): string {
  if (n === undefined || !Number.isFinite(n)) return 'n/a'
  return n >= 10 ? `${group(n)}×` : `${n.toFixed(2)}×`
}

function verdict(target: Target): string {
  return target.met === undefined ? target.text : `${target.text}: ${target.met ? 'met' : 'MISSED'}`
}

export function ratioOf(row: ScenarioRow): number | undefined {
  const mine = row.result?.rps
  const theirs = row.reference?.result?.rps
  if (mine === undefined || theirs === undefined || theirs === 0) return undefined
  return mine / theirs
}

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ')

function renderTable(rows: ScenarioRow[]): string {
  const header = ['scenario', 'server', 'req/s', 'p50 ms', 'p99 ms', 'errors', 'reference req/s', 'ratio', 'target']
  const lines = [
    `| ${header.join(' | ')} |`,
    `| ${header.map((_h, i) => (i >= 2 && i <= 7 ? '---:' : '---')).join(' | ')} |`,
  ]
  for (const row of rows) {
    const r = row.result
    const ref = row.reference
    const refText = ref
      ? ref.result
        ? `${formatRate(ref.result.rps)} (${ref.name}${clientBound(ref.result) ? ', client-bound' : ''})`
        : `${ref.name}: not run`
      : ''
    const values = [
      row.scenario,
      row.server,
      r
        ? `${formatRate(r.rps)}${r.requests < FEW_RESPONSES ? ` (${r.requests} responses)` : ''}${clientBound(r)}`
        : `not run: ${row.skipped ?? '?'}`,
      r ? formatMs(r.p50) : '',
      r ? formatMs(r.p99) : '',
      r ? group(r.errors) : '',
      refText,
      ref ? formatRatio(ratioOf(row)) : '',
      row.isReference ? 'reference' : row.targets.map(verdict).join('; ') || '–',
    ]
    lines.push(`| ${values.map(cell).join(' | ')} |`)
  }
  return lines.join('\n')
}

export function renderReport(header: string[], sections: SectionFacts[], footer: string[]): string {
  const out = [...header, '']
  for (const section of sections) {
    out.push(`## ${section.title}`, '', renderTable(section.rows), '')
    for (const line of section.lines) out.push(`- ${line}`)
    out.push('')
  }
  out.push(...footer)
  return `${out.join('\n').trimEnd()}\n`
}
