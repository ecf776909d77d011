/**
 * The docs cannot go stale unnoticed: the README stays short; every relative link and anchor in the
 * Markdown pages resolves; every JOBSNAP_* variable the code reads is in the
 * configuration table with its default, and every row there is read by the
 * code; every command and script path shown as code exists; every endpoint
 * of the OpenAPI document is named on the API page.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import { parse as parseYaml } from 'yaml'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEFAULTS } from '../../core/index.ts'
import { REPO_ROOT } from '../../support/processes.ts'
import { buildFixture, type FixtureSnapshot } from '../support/fixtures.ts'

/** Where the docs live: the README, the dataset contract and every page under docs/. */
function markdownPages(): string[] {
  const pages = ['README.md', 'data/README.md']
  const walk = (dir: string) => {
    if (!existsSync(path.join(REPO_ROOT, dir))) return
    for (const name of readdirSync(path.join(REPO_ROOT, dir)).sort()) {
      const relative = path.join(dir, name)
      if (statSync(path.join(REPO_ROOT, relative)).isDirectory()) walk(relative)
      else if (name.endsWith('.md')) pages.push(relative)
    }
  }
  walk('docs')
  return pages.filter((page) => existsSync(path.join(REPO_ROOT, page)))
}

/** The page that documents the REST API: its own page once the docs have one, else the README. */
const API_PAGE = existsSync(path.join(REPO_ROOT, 'docs/api.md')) ? 'docs/api.md' : 'README.md'
/** The page whose table lists every setting. */
const CONFIGURATION_PAGE = existsSync(path.join(REPO_ROOT, 'docs/operating.md')) ? 'docs/operating.md' : 'README.md'

const read = (page: string) => readFileSync(path.join(REPO_ROOT, page), 'utf8')

/** The text outside fenced code blocks (links and headings inside them are examples, not structure). */
function prose(markdown: string): string {
  return markdown.replace(/^```[\s\S]*?^```/gm, '')
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens, repeats numbered. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>()
  const seen = new Map<string, number>()
  for (const [, text] of prose(markdown).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = text!
      .replace(/`/g, '')
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-')
    const count = seen.get(base) ?? 0
    seen.set(base, count + 1)
    anchors.add(count === 0 ? base : `${base}-${count}`)
  }
  return anchors
}

/** Relative links `[text](target)` outside code, with the page they are on. */
function relativeLinks(page: string): string[] {
  const text = prose(read(page)).replace(/`[^`\n]*`/g, '')
  return [...text.matchAll(/\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)]
    .map((match) => match[1]!)
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target))
}

describe('the README', () => {
  it('stays short enough to read in ten minutes (under 12,500 bytes): the rest belongs in docs/', () => {
    expect(Buffer.byteLength(read('README.md'))).toBeLessThan(12_500)
  })
})

describe('links and anchors', () => {
  it('every relative link names a file that exists, and every anchor a heading it has', () => {
    const broken: string[] = []
    for (const page of markdownPages()) {
      for (const target of relativeLinks(page)) {
        const [file, anchor] = target.split('#') as [string, string | undefined]
        const resolved = file ? path.normalize(path.join(path.dirname(page), decodeURI(file))) : page
        if (!existsSync(path.join(REPO_ROOT, resolved))) {
          broken.push(`${page}: ${target} (no file ${resolved})`)
          continue
        }
        if (anchor && resolved.endsWith('.md') && !anchorsOf(read(resolved)).has(decodeURIComponent(anchor)))
          broken.push(`${page}: ${target} (no heading with anchor #${anchor} in ${resolved})`)
      }
    }
    expect(broken).toEqual([])
  })

  it('the anchor rule is GitHub’s (checked on headings whose anchors are known)', () => {
    const anchors = anchorsOf(
      '# jobsnap\n## For the data team\n### `jobsnap purge`: after each build\n## API\n## API\n',
    )
    expect([...anchors]).toEqual(['jobsnap', 'for-the-data-team', 'jobsnap-purge-after-each-build', 'api', 'api-1'])
  })
})

/** Every file of the project's own code, for the variables and paths it reads. */
function sourceFiles(): string[] {
  const files: string[] = ['cli.ts']
  const walk = (dir: string) => {
    for (const name of readdirSync(path.join(REPO_ROOT, dir))) {
      const relative = path.join(dir, name)
      if (statSync(path.join(REPO_ROOT, relative)).isDirectory()) walk(relative)
      else if (/\.(ts|mjs|sh)$/.test(name) || name === 'run') files.push(relative)
    }
  }
  for (const dir of ['core', 'build', 'runtime', 'bench', 'support', 'bin', '.ci']) walk(dir)
  return files
}

/** A read of a JOBSNAP_* environment variable: `env.X`, `env['X']`, or `$X` / `${X}` in a shell script. */
const ENVIRONMENT_READ = /(?:\benv\.|\benv\[['"]|\$\{?)(JOBSNAP_[A-Z0-9_]+)\b/g

/** Rows of the configuration table: variable -> its Default cell, as written. */
function configurationTable(): Map<string, string> {
  const rows = new Map<string, string>()
  const text = prose(read(CONFIGURATION_PAGE))
  const start = text.indexOf('| Variable | Default |')
  expect(start, `${CONFIGURATION_PAGE} has a table headed "| Variable | Default |"`).toBeGreaterThanOrEqual(0)
  for (const line of text.slice(start).split('\n').slice(2)) {
    if (!line.startsWith('|')) break
    const [name, value] = line
      .split('|')
      .slice(1, 3)
      .map((cell) => cell.trim())
    rows.set(name!.replace(/`/g, ''), value!)
  }
  return rows
}

/** How a default reads in the table: `3000`, `a,b`, or `empty`. */
function shownDefault(value: unknown): string | undefined {
  if (value === undefined) return undefined
  const text = Array.isArray(value) ? value.join(',') : String(value)
  return text === '' ? 'empty' : `\`${text}\``
}

describe('configuration table', () => {
  it('lists every JOBSNAP_* variable the code reads, with the default the code has', () => {
    const read = new Set<string>(Object.keys(DEFAULTS))
    for (const file of sourceFiles())
      for (const [, name] of readFileSync(path.join(REPO_ROOT, file), 'utf8').matchAll(ENVIRONMENT_READ))
        read.add(name!)
    const table = configurationTable()
    const missing = [...read].filter((name) => !table.has(name)).sort()
    expect(missing, `variables the code reads but ${CONFIGURATION_PAGE}'s table does not list`).toEqual([])
    const defaults = DEFAULTS as unknown as Record<string, unknown>
    const wrong = [...table]
      .filter(([name, cell]) => {
        const expected = shownDefault(defaults[name])
        return expected !== undefined && cell !== expected
      })
      .map(([name, cell]) => `${name}: table says ${cell}, code says ${shownDefault(defaults[name])}`)
    expect(wrong).toEqual([])
  })

  it('lists no variable the code does not read', () => {
    const code = sourceFiles()
      .map((file) => readFileSync(path.join(REPO_ROOT, file), 'utf8'))
      .join('\n')
    const unread = [...configurationTable().keys()].filter((name) => !new RegExp(`\\b${name}\\b`).test(code))
    expect(unread).toEqual([])
  })
})

describe('commands shown in the docs', () => {
  const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts
  /** Every code span and code block of every page. */
  const codeOf = (page: string) => {
    const text = read(page)
    const blocks = [...text.matchAll(/^```[^\n]*\n([\s\S]*?)^```/gm)].map((match) => match[1]!)
    const spans = [...prose(text).matchAll(/`([^`\n]+)`/g)].map((match) => match[1]!)
    return [...blocks, ...spans]
  }

  it('every `npm run` script exists and every script path run with tsx, node or bash is a file', () => {
    const problems: string[] = []
    for (const page of markdownPages()) {
      for (const code of codeOf(page)) {
        for (const [, script] of code.matchAll(/\bnpm (?:run )?([a-z][\w:-]*)/g)) {
          const builtIn = ['ci', 'install', 'i', 'test', 'start', 'run', 'view', 'audit', 'exec'].includes(script!)
          const named = /\bnpm run /.test(code) || script === 'test' || script === 'start'
          if (named && !(script! in scripts) && !(builtIn && script !== 'test' && script !== 'start'))
            problems.push(`${page}: npm script "${script}" is not in package.json`)
        }
        for (const [, file] of code.matchAll(
          /\b(?:tsx|node|bash)\s+((?:[\w.-]+\/)*[\w.-]+\.(?:ts|mjs|js|sh)|\.ci\/run)\b/g,
        ))
          if (!existsSync(path.join(REPO_ROOT, file!))) problems.push(`${page}: ${file} does not exist`)
      }
    }
    expect(problems).toEqual([])
  })

  it('every source file a page names by its path from the top (`runtime/query/seek.ts`, `deploy/nginx.conf`) exists', () => {
    const problems: string[] = []
    const REPOSITORY_PATH = /^(?:core|build|runtime|bench|support|test|deploy|clients|bin|data)\/[\w./-]*\.\w+$/
    for (const page of markdownPages())
      for (const [, span] of prose(read(page)).matchAll(/`([^`\n]+)`/g))
        if (REPOSITORY_PATH.test(span!) && !existsSync(path.join(REPO_ROOT, span!)))
          problems.push(`${page}: ${span} does not exist`)
    expect(problems).toEqual([])
  })
})

describe('the API page', () => {
  let fixture: FixtureSnapshot
  beforeAll(async () => {
    fixture = await buildFixture({ jobs: 40, companies: 8 })
  })
  afterAll(async () => {
    await fixture?.cleanup()
  })

  it('names every path of the OpenAPI document', async () => {
    const document = parseYaml(readFileSync(path.join(fixture.build.snapshotDir, 'openapi.yaml'), 'utf8')) as {
      paths: Record<string, unknown>
    }
    const page = read(API_PAGE)
    const paths = Object.keys(document.paths)
    expect(paths.length).toBeGreaterThan(5)
    expect(paths.filter((p) => !page.includes(`\`${p}`) && !page.includes(`${p}\``))).toEqual([])
  })
})
