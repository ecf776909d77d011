/**
 * The printed result: a header with the run's date (UTC), commit, Node,
 * CPUs, memory and load average, then one markdown table per dataset
 * (scenario | server | req/s | p50 ms | p99 ms | errors | reference req/s |
 * ratio | target) and the build, ready-time and RSS lines under it.
 * Targets are printed next to the figures, never asserted: the exit code
 * says only whether the run ran.
 */
import { execFileSync } from 'node:child_process'
import os from 'node:os'
import type { LoadResult } from './load.ts'

export interface Target {
  /** e.g. "≥ 0.5× nginx". */
  text: string
  /** undefined: nothing to judge (e.g. the reference is missing). */
  met: boolean | undefined
}

/** A target a figure should reach; `met` is unknown when there is no figure. */
export const atLeast = (value: number | undefined, min: number, text: string): Target => ({
  text,
  met: value === undefined ? undefined : value >= min,
})

/** A target a figure should stay under; unknown when there is no finite figure. */
export const atMost = (value: number | undefined, max: number, text: string): Target => ({
  text,
  met: value === undefined || !Number.isFinite(value) ? undefined : value <= max,
})

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

/** What a reader needs to judge a report's figures, taken when the run starts: when, which code, how busy the machine was. */
export interface RunContext {
  startedAt: Date
  /** Short hash of HEAD, "+ uncommitted changes" when the tree differs from it; or why it is unknown. */
  commit: string
  /** 1-minute load average (os.loadavg) when the run started. */
  loadAtStart: number
}

const git = (repoDir: string, ...args: string[]) =>
  execFileSync('git', args, { cwd: repoDir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()

function commitOf(repoDir: string): string {
  try {
    const head = git(repoDir, 'rev-parse', '--short', 'HEAD')
    return git(repoDir, 'status', '--porcelain') === '' ? head : `${head} + uncommitted changes`
  } catch {
    return 'unknown (no git checkout)'
  }
}

export function runContext(repoDir: string): RunContext {
  return { startedAt: new Date(), commit: commitOf(repoDir), loadAtStart: os.loadavg()[0]! }
}

/** The report's first lines: date and time (UTC), commit, Node, CPUs, memory, and the load average now and at the start. */
export function contextLines(context: RunContext): string[] {
  const cpus = os.cpus()
  const models = [...new Set(cpus.map((cpu) => cpu.model.trim()))].join(' / ') || 'unknown CPU'
  const seconds = (Date.now() - context.startedAt.getTime()) / 1000
  const took = seconds < 90 ? `${seconds.toFixed(0)} s` : `${(seconds / 60).toFixed(0)} min`
  return [
    `- Run: ${context.startedAt.toISOString().replace('T', ' ').slice(0, 16)} UTC, took ${took}; commit ${context.commit}; Node ${process.version}.`,
    `- Machine: ${cpus.length} CPUs (${models}); ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB memory.`,
    `- Load average (1 min): ${context.loadAtStart.toFixed(2)} at the start, ${os.loadavg()[0]!.toFixed(2)} at the end (the end includes the bench's own load; well above 0 at the start means other processes were using the CPUs, so compare figures only within a run).`,
  ]
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
    out.push(`## ${section.title}`, '')
    if (section.rows.length) out.push(renderTable(section.rows), '')
    for (const line of section.lines) out.push(`- ${line}`)
    out.push('')
  }
  out.push(...footer)
  return `${out.join('\n').trimEnd()}\n`
}
