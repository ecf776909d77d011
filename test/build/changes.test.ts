import { describe, expect, it } from 'vitest'
import { diffSnapshots as diffMaps } from '../../build/index.ts'

const diffSnapshots = (previous: Record<string, string>, next: Record<string, string>, companiesChanged?: boolean) =>
  diffMaps(new Map(Object.entries(previous)), new Map(Object.entries(next)), companiesChanged)

describe('purge list', () => {
  it('an employer edited with no job file changed lists the computed responses, not the job files', () => {
    const files = { 'v2/jobs/a.json': 'h1', 'v1/25/1.json': 'h2', 'openapi.yaml': 'h3' }
    const changes = diffSnapshots(files, { ...files }, true)
    expect(changes.changed).toEqual([])
    expect(changes.purge).toEqual(
      expect.arrayContaining(['/api/v2/companies', '/api/v2/companies/*', '/api/v2/filters', '/api/v2/changes?*']),
    )
    expect(changes.purge).not.toContain('/api/v2/jobs/a')
  })

  it('nothing changed: nothing to purge', () => {
    const files = { 'v2/jobs/a.json': 'h1' }
    expect(diffSnapshots(files, { ...files }, false).purge).toEqual([])
  })

  it('only the OpenAPI document changed: it and the change feed, no computed list', () => {
    expect(diffSnapshots({ 'openapi.yaml': 'a' }, { 'openapi.yaml': 'b' }).purge).toEqual([
      '/openapi.yaml',
      '/api/v2/changes?*',
    ])
  })

  it('a changed export: its file and the exports index', () => {
    const before = { 'exports/jobs.ndjson.gz': 'a', 'exports/jobs.parquet': 'b' }
    expect(diffSnapshots(before, { ...before, 'exports/jobs.parquet': 'c' }).purge).toEqual([
      '/api/v2/exports/jobs.parquet',
      '/api/v2/exports',
      '/api/v2/changes?*',
    ])
  })
})
