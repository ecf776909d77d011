/**
 * The tool endpoint driven by a client nobody here wrote: the MCP
 * Inspector's command-line mode (`mcp-inspector --cli URL --transport http
 * --method ...`), run as a child process against a real server on loopback.
 *
 * @modelcontextprotocol/inspector is pinned to 0.15.x: it is the newest
 * release that runs on Node 20 (0.16.0 and later declare engines node
 * >=22.7.5, and 1.x/2.x >=22.19). Its CLI needs no network beyond the
 * target URL.
 */
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunningServer } from '../../runtime/index.ts'
import { buildFixture, startFixtureServer, type FixtureSnapshot } from '../support/fixtures.ts'
import { TOOL_NAMES, type V2ListResponse } from './support/mcp.ts'

const run = promisify(execFile)

/** The Inspector's own bin entry, found through its package.json like npx would. */
function inspectorBin(): string {
  const packageJson = createRequire(import.meta.url).resolve('@modelcontextprotocol/inspector/package.json')
  const manifest = JSON.parse(readFileSync(packageJson, 'utf8')) as { bin: Record<string, string> }
  const bin = manifest.bin['mcp-inspector']
  if (!bin) throw new Error('@modelcontextprotocol/inspector has no mcp-inspector bin')
  return path.join(path.dirname(packageJson), bin)
}

interface CliTool {
  name: string
  annotations?: { readOnlyHint?: boolean }
  inputSchema: { type: string }
  outputSchema?: { type: string }
}
interface CliToolResult {
  content: { type: string; text?: string }[]
  structuredContent?: {
    total: number
    page: number
    has_more: boolean
    jobs: { slug: string; schedule?: string; is_four_day_week?: boolean }[]
  }
  isError?: boolean
}

let fixture: FixtureSnapshot
let server: RunningServer

/** Runs the Inspector CLI against the server's /api/mcp and parses what it prints. */
async function inspector<T>(...args: string[]): Promise<T> {
  const { stdout } = await run(
    process.execPath,
    [inspectorBin(), '--cli', `${server.url}/api/mcp`, '--transport', 'http', ...args],
    {
      timeout: 60_000,
      maxBuffer: 16 * 1024 * 1024,
      // The launcher starts its CLI with `node` from PATH: make that this Node.
      env: { ...process.env, PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}` },
    },
  )
  try {
    return JSON.parse(stdout) as T
  } catch {
    throw new Error(`the Inspector printed something that is not JSON:\n${stdout.slice(0, 2000)}`)
  }
}

beforeAll(async () => {
  fixture = await buildFixture({ jobs: 200, companies: 30, seed: 3 })
  server = await startFixtureServer(fixture.distDir)
})

afterAll(async () => {
  await server?.close()
  await fixture?.cleanup()
})

describe('MCP Inspector CLI', () => {
  it('tools/list shows every tool, read-only', async () => {
    const { tools } = await inspector<{ tools: CliTool[] }>('--method', 'tools/list')
    expect(tools.map((t) => t.name).sort()).toEqual([...TOOL_NAMES].sort())
    for (const tool of tools) {
      expect(tool.annotations, tool.name).toMatchObject({ readOnlyHint: true })
      expect(tool.inputSchema.type).toBe('object')
      expect(tool.outputSchema?.type).toBe('object')
    }
  })

  it('tools/call search_jobs returns the page GET /api/v2/jobs returns, compressed hours not a four-day week', async () => {
    const result = await inspector<CliToolResult>(
      '--method',
      'tools/call',
      '--tool-name',
      'search_jobs',
      '--tool-arg',
      'schedule=["compressed_hours"]',
      '--tool-arg',
      'page=1',
    )
    expect(result.isError ?? false).toBe(false)
    expect(result.content[0]?.type).toBe('text')
    expect(result.content[0]?.text?.length).toBeGreaterThan(0)

    const rest = (await (
      await fetch(`${server.url}/api/v2/jobs?schedule=compressed_hours&limit=25`)
    ).json()) as V2ListResponse
    expect(rest.total).toBeGreaterThan(0)
    const structured = result.structuredContent!
    expect(structured.total).toBe(rest.total)
    expect(structured.page).toBe(1)
    expect(structured.has_more).toBe(rest.has_more)
    expect(structured.jobs.map((j) => j.slug)).toEqual(rest.data.map((j) => j.slug))
    for (const job of structured.jobs)
      expect(job).toMatchObject({ schedule: 'compressed_hours', is_four_day_week: false })
  })

  it('tools/call with page 201 answers a tool result with isError naming the argument, which the Inspector prints', async () => {
    const result = await inspector<CliToolResult>(
      '--method',
      'tools/call',
      '--tool-name',
      'search_jobs',
      '--tool-arg',
      'page=201',
    )
    expect(result.isError).toBe(true)
    expect(result.structuredContent).toBeUndefined()
    expect(result.content[0]?.text).toMatch(/^Invalid arguments for search_jobs: page: .*200/)
  })

  it('tools/call with level Senior (another letter case) is answered like senior', async () => {
    const upper = await inspector<CliToolResult>(
      '--method',
      'tools/call',
      '--tool-name',
      'search_jobs',
      '--tool-arg',
      'level=["Senior"]',
    )
    expect(upper.isError ?? false).toBe(false)
    const rest = (await (await fetch(`${server.url}/api/v2/jobs?level=senior&limit=25`)).json()) as V2ListResponse
    expect(rest.total).toBeGreaterThan(0)
    expect(upper.structuredContent?.total).toBe(rest.total)
  })
})
