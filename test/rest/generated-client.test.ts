/**
 * A generated client that works (docs/api.md, OpenAPI document and typed clients): openapi-typescript
 * turns the document a real server serves into types, the example program
 * (clients/typescript/example.ts) is type-checked against them with
 * TypeScript 5 (what openapi-typescript supports), then run with openapi-fetch
 * against the same server, and what it prints is compared with plain HTTP.
 */
import { execFile } from 'node:child_process'
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunningServer } from '../../runtime/index.ts'
import { REPO_ROOT } from '../../support/processes.ts'
import { buildFixture, type FixtureSnapshot, startFixtureServer } from '../support/fixtures.ts'

const run = promisify(execFile)
const CLIENT_DIR = path.join(REPO_ROOT, 'clients', 'typescript')
const GENERATED_DIR = path.join(CLIENT_DIR, 'generated')
const bin = (name: string) => path.join(CLIENT_DIR, 'node_modules', '.bin', name)

let fixture: FixtureSnapshot
let server: RunningServer

beforeAll(async () => {
  fixture = await buildFixture({ jobs: 120, companies: 20, seed: 11 })
  server = await startFixtureServer(fixture.distDir, { JOBSNAP_REST_LIMIT: 100_000 })
  await rm(GENERATED_DIR, { recursive: true, force: true })
  await mkdir(GENERATED_DIR, { recursive: true })
  const docPath = path.join(GENERATED_DIR, 'openapi.yaml')
  await writeFile(docPath, await (await fetch(`${server.url}/openapi.yaml`)).text())
  await run(bin('openapi-typescript'), [docPath, '--output', path.join(GENERATED_DIR, 'jobsnap.d.ts')], {
    cwd: CLIENT_DIR,
    env: { ...process.env, NO_COLOR: '1' },
  })
}, 120_000)

afterAll(async () => {
  await server?.close()
  await fixture?.cleanup()
})

/** `tsc --noEmit -p <project>` with the workspace's TypeScript 5; resolves with its exit code and output. */
async function typecheck(project: string): Promise<{ code: number; output: string }> {
  try {
    const { stdout } = await run(bin('tsc'), ['--noEmit', '-p', project], { cwd: CLIENT_DIR })
    return { code: 0, output: stdout }
  } catch (error) {
    const failure = error as { code?: number; stdout?: string; stderr?: string }
    return { code: failure.code ?? -1, output: `${failure.stdout ?? ''}${failure.stderr ?? ''}` }
  }
}

describe('the TypeScript client generated from /openapi.yaml', () => {
  it('type-checks the example program against the generated types', async () => {
    const { code, output } = await typecheck(CLIENT_DIR)
    expect(output).toBe('')
    expect(code).toBe(0)
  }, 60_000)

  it('the types are real: the example without one of its @ts-expect-error lines does not compile', async () => {
    const example = await readFile(path.join(CLIENT_DIR, 'example.ts'), 'utf8')
    const sabotaged = example
      .replace("from './generated/jobsnap.js'", "from './jobsnap.js'")
      .replace('// @ts-expect-error sort is date or salary, not a number', '// sort is date or salary')
    expect(sabotaged).not.toBe(example)
    await writeFile(path.join(GENERATED_DIR, 'sabotaged.ts'), sabotaged)
    await writeFile(
      path.join(GENERATED_DIR, 'tsconfig.json'),
      JSON.stringify({ extends: '../tsconfig.json', include: ['sabotaged.ts', 'jobsnap.d.ts'] }),
    )
    const { code, output } = await typecheck(GENERATED_DIR)
    expect(code).not.toBe(0)
    expect(output).toMatch(/sabotaged\.ts.*TS2322/)
  }, 60_000)

  it('names the error body ErrorResponse, so no generated type shadows the global Error', async () => {
    const types = await readFile(path.join(GENERATED_DIR, 'jobsnap.d.ts'), 'utf8')
    expect(types).toMatch(/^\s+ErrorResponse: \{/m)
    expect(types).not.toMatch(/^\s+Error: \{/m)
  })

  it('types closed vocabularies as unions: without its @ts-expect-error, a misspelt value is a compile error', async () => {
    const example = await readFile(path.join(CLIENT_DIR, 'example.ts'), 'utf8')
    for (const line of [
      '// @ts-expect-error sort is date or salary: a misspelt value of a closed vocabulary does not compile',
      '// @ts-expect-error work_arrangement takes onsite, hybrid and remote',
    ]) {
      const sabotaged = example.replace("from './generated/jobsnap.js'", "from './jobsnap.js'").replace(line, '//')
      expect(sabotaged).not.toBe(example.replace("from './generated/jobsnap.js'", "from './jobsnap.js'"))
      await writeFile(path.join(GENERATED_DIR, 'sabotaged.ts'), sabotaged)
      await writeFile(
        path.join(GENERATED_DIR, 'tsconfig.json'),
        JSON.stringify({ extends: '../tsconfig.json', include: ['sabotaged.ts', 'jobsnap.d.ts'] }),
      )
      const { code, output } = await typecheck(GENERATED_DIR)
      expect(code, line).not.toBe(0)
      // TS2820 is TS2322 with a suggestion: "salery" is not assignable to "date" | "salary"; did you mean "salary"?
      expect(output, line).toMatch(/sabotaged\.ts.*TS(2322|2820)/)
    }
  }, 120_000)

  it('runs against the real server and gets what plain HTTP gets', async () => {
    const { stdout } = await run(path.join(REPO_ROOT, 'node_modules', '.bin', 'tsx'), ['example.ts', server.url], {
      cwd: CLIENT_DIR,
    })
    const lines = Object.fromEntries(
      stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { call: string })
        .map((line) => [line.call, line]),
    )
    const direct = (await (
      await fetch(`${server.url}/api/v2/jobs?work_arrangement=remote&work_arrangement=hybrid&sort=salary&limit=5`)
    ).json()) as { total: number; data: { slug: string }[] }
    expect(direct.data.length).toBe(5)
    expect(lines.list).toEqual({ call: 'list', total: direct.total, slugs: direct.data.map((job) => job.slug) })
    const job = (await (await fetch(`${server.url}/api/v2/jobs/${direct.data[0]!.slug}`)).json()) as {
      slug: string
      title: string
      company?: { name: string }
    }
    expect(lines.job).toEqual({ call: 'job', slug: job.slug, title: job.title, company: job.company?.name })
    expect(lines.refused).toEqual({ call: 'refused', status: 400, field: 'salary_min' })
    expect(lines.missing).toEqual({ call: 'missing', status: 404, code: 404 })
  }, 60_000)
})
