/**
 * The built `openapi.yaml` (docs/api.md): valid OpenAPI 3.1 according to
 * the real linter, document version 1.0.0, and every property of every
 * component schema described.
 */
import { execFile } from 'node:child_process'
import { readFile, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildFixture, tempDir, type FixtureSnapshot } from '../support/fixtures.ts'
import { REPO_ROOT } from '../../support/processes.ts'

type Json = null | boolean | number | string | Json[] | { [key: string]: Json }
type JsonObject = { [key: string]: Json }

interface LintProblem {
  ruleId: string
  severity: 'error' | 'warn'
  message: string
  location: { pointer?: string }[]
}
interface LintReport {
  totals: { errors: number; warnings: number; ignored: number }
  problems: LintProblem[]
}

/**
 * Problems of the `recommended-strict` ruleset we accept: rule, where (a
 * pointer pattern), and why. Anything else fails the test, to be fixed or
 * justified here rather than waved through.
 */
const ALLOWED_PROBLEMS: { rule: string; at: RegExp; why: string }[] = [
  {
    rule: 'operation-4xx-response',
    at: /^#\/paths\/[^/]+\/options\/responses$/,
    why: 'A CORS preflight on a path without parameters is answered 204 before anything else is looked at: it has no client error to document. (On a {slug} path it documents the 400 of an undecodable slug.)',
  },
]
const allowed = (p: LintProblem) =>
  ALLOWED_PROBLEMS.some((a) => a.rule === p.ruleId && a.at.test(p.location[0]?.pointer ?? ''))

/** recommended-strict, with the example checks raised to errors: every example must fit its schema. */
const REDOCLY_CONFIG = `extends:
  - recommended-strict
rules:
  no-invalid-media-type-examples: error
  no-invalid-parameter-examples: error
  no-invalid-schema-examples: error
`

const isObject = (value: Json | undefined): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

let fixture: FixtureSnapshot
let workDir: string
let docPath: string
let doc: JsonObject

beforeAll(async () => {
  fixture = await buildFixture({ jobs: 60, companies: 12, seed: 4 })
  workDir = await tempDir('openapi')
  docPath = path.join(fixture.distDir, 'current', 'openapi.yaml')
  doc = parseYaml(await readFile(docPath, 'utf8')) as JsonObject
  // An explicit config, so the result never depends on a redocly.yaml lying around.
  await writeFile(path.join(workDir, 'redocly.yaml'), REDOCLY_CONFIG)
})
afterAll(async () => {
  await fixture?.cleanup()
  if (workDir) await rm(workDir, { recursive: true, force: true })
})

/** Runs `redocly lint` (the devDependency, via npx) and returns its JSON report and exit code. */
function redoclyLint(file: string): Promise<{ code: number; report: LintReport; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(
      'npx',
      [
        '--no-install',
        'redocly',
        'lint',
        file,
        '--format=json',
        '--max-problems=1000',
        `--config=${path.join(workDir, 'redocly.yaml')}`,
      ],
      {
        cwd: REPO_ROOT,
        timeout: 60_000,
        maxBuffer: 16 * 1024 * 1024,
        // No telemetry or update checks: the test stays off the network.
        env: {
          ...process.env,
          REDOCLY_TELEMETRY: 'off',
          REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true',
          REDOCLY_SUPPRESS_NOTIFICATIONS: 'true',
          NO_COLOR: '1',
        },
      },
      (error, stdout, stderr) => {
        const code = error
          ? typeof (error as { code?: unknown }).code === 'number'
            ? (error as { code: number }).code
            : -1
          : 0
        try {
          resolve({ code, report: JSON.parse(String(stdout)) as LintReport, stderr: String(stderr) })
        } catch {
          reject(new Error(`redocly printed no JSON report (exit ${code}):\n${String(stdout)}\n${String(stderr)}`))
        }
      },
    )
  })
}

interface SpectralProblem {
  code: string
  message: string
  path: string[]
  severity: number
}

/** Runs Stoplight Spectral's `spectral:oas` ruleset (the devDependency) and returns its findings. */
function spectralLint(file: string): Promise<SpectralProblem[]> {
  return new Promise((resolve, reject) => {
    execFile(
      path.join(REPO_ROOT, 'node_modules', '.bin', 'spectral'),
      ['lint', file, `--ruleset=${path.join(workDir, 'spectral.yaml')}`, '--format=json', '--quiet'],
      { cwd: workDir, timeout: 60_000, maxBuffer: 16 * 1024 * 1024, env: { ...process.env, NO_COLOR: '1' } },
      (error, stdout, stderr) => {
        try {
          resolve(JSON.parse(String(stdout) || '[]') as SpectralProblem[])
        } catch {
          reject(
            new Error(`spectral printed no JSON report (${error?.message}):\n${String(stdout)}\n${String(stderr)}`),
          )
        }
      },
    )
  })
}

describe('openapi.yaml', () => {
  it('passes Spectral spectral:oas with no finding at all, and Spectral catches a broken copy', async () => {
    await writeFile(path.join(workDir, 'spectral.yaml'), 'extends: ["spectral:oas"]\n')
    const findings = await spectralLint(docPath)
    expect(findings.map((f) => `${f.code} at ${f.path.join('/')}: ${f.message}`)).toEqual([])
    const broken = structuredClone(doc)
    const paths = broken.paths as JsonObject
    ;((paths['/api/v1'] as JsonObject).get as JsonObject).operationId = 'listJobs'
    const brokenPath = path.join(workDir, 'broken-spectral.yaml')
    await writeFile(brokenPath, stringifyYaml(broken))
    expect((await spectralLint(brokenPath)).map((f) => f.code)).toContain('operation-operationId-unique')
  })

  it('passes redocly lint with recommended-strict, examples checked: nothing but the justified problems', async () => {
    const { report } = await redoclyLint(docPath)
    const unexplained = report.problems
      .filter((p) => !allowed(p))
      .map((p) => `${p.severity} ${p.ruleId} at ${p.location[0]?.pointer}: ${p.message}`)
    expect(unexplained).toEqual([])
  })

  it('the lint is meaningful: a broken copy of the document fails it', async () => {
    const broken = structuredClone(doc)
    const info = broken.info as JsonObject
    delete info.version
    const v2Job = ((broken.components as JsonObject).schemas as JsonObject).V2Job as JsonObject
    ;(v2Job.properties as JsonObject).company = { $ref: '#/components/schemas/NoSuchSchema' }
    // An example that does not fit its schema.
    const v1Job = ((broken.components as JsonObject).schemas as JsonObject).V1Job as JsonObject
    ;((v1Job.examples as JsonObject[])[0] as JsonObject).posted = 'yesterday'
    const brokenPath = path.join(workDir, 'broken.yaml')
    await writeFile(brokenPath, stringifyYaml(broken))
    const { code, report } = await redoclyLint(brokenPath)
    expect(code).not.toBe(0)
    const rules = new Set(report.problems.filter((p) => p.severity === 'error').map((p) => p.ruleId))
    expect(rules).toContain('no-unresolved-refs')
    expect(rules).toContain('struct')
    expect(rules).toContain('no-invalid-schema-examples')
  })

  it('is OpenAPI 3.1 with document version 1.0.0', () => {
    expect(typeof doc.openapi).toBe('string')
    expect(doc.openapi as string).toMatch(/^3\.1\./)
    expect((doc.info as JsonObject).version).toBe('1.0.0')
    // A link back is asked for, not required: no SPDX licence, each of which binds the user to terms.
    expect((doc.info as JsonObject).license).toEqual({
      name: expect.stringContaining('not required'),
      url: expect.any(String),
    })
    expect(Object.keys(doc.paths as JsonObject).sort()).toEqual([
      '/api/v1',
      '/api/v2/changes',
      '/api/v2/companies',
      '/api/v2/companies/{slug}',
      '/api/v2/exports',
      '/api/v2/exports/{name}',
      '/api/v2/filters',
      '/api/v2/jobs',
      '/api/v2/jobs/{slug}',
      '/feeds/jobs.atom',
      '/feeds/jobs.json',
      '/feeds/jobs.rss',
    ])
  })

  it('describes every property of every component schema, nested ones included', () => {
    const schemas = (doc.components as JsonObject).schemas as JsonObject
    expect(Object.keys(schemas)).toEqual(
      expect.arrayContaining([
        'V1Job',
        'V1Company',
        'V1Tag',
        'V1List',
        'V2Job',
        'V2Company',
        'V2Location',
        'V2Tag',
        'V2List',
        'ErrorResponse',
      ]),
    )
    const described = (schema: JsonObject) => typeof schema.description === 'string' && schema.description.trim() !== ''
    const undescribed: string[] = []
    let checked = 0

    const walk = (schema: Json | undefined, where: string) => {
      if (!isObject(schema)) return
      if (isObject(schema.properties)) {
        for (const [name, property] of Object.entries(schema.properties)) {
          if (!isObject(property)) continue
          checked++
          // A bare $ref property is described by its target: OpenAPI 3.1 tools show the target's
          // description there. The target must then have one.
          const ref = typeof property.$ref === 'string' ? property.$ref : undefined
          const target = ref ? schemas[ref.replace('#/components/schemas/', '')] : undefined
          if (!described(property) && !(isObject(target) && described(target))) undescribed.push(`${where}.${name}`)
          walk(property, `${where}.${name}`)
        }
      }
      walk(schema.items, `${where}[]`)
      for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
        const list = schema[key]
        if (Array.isArray(list))
          list.forEach((s, i) => {
            walk(s, `${where}.${key}[${i}]`)
          })
      }
    }
    for (const [name, schema] of Object.entries(schemas)) {
      if (isObject(schema) && !described(schema)) undescribed.push(name)
      walk(schema, name)
    }
    expect(undescribed).toEqual([])
    // V2Job alone has 27 properties; the walk really went through the documents.
    expect(checked).toBeGreaterThan(80)
  })

  it('shows real data: the newest job and its employer as examples, only real bounds', async () => {
    const text = await readFile(docPath, 'utf8')
    // zod's safe-integer bounds are JavaScript's, not the contract's: none is left for Swagger UI to show.
    expect(text).not.toContain('9007199254740991')
    const schemas = (doc.components as JsonObject).schemas as Record<string, JsonObject>
    const withoutExample = Object.keys(schemas).filter((name) => !Array.isArray(schemas[name]!.examples))
    // The filter vocabularies count every live job at request time; the build has no honest count to show.
    expect(withoutExample.sort()).toEqual(['FilterValue', 'LabelledFilterValue', 'V2Filters'])
    const job = (schemas.V2Job!.examples as JsonObject[])[0]!
    const slugParameter = ((doc.paths as JsonObject)['/api/v2/jobs/{slug}'] as { get: { parameters: JsonObject[] } })
      .get.parameters[0]!
    expect(slugParameter.example).toBe(job.slug)
    // The example is a job the build published, with the body the server will serve for it.
    const served = JSON.parse(
      await readFile(path.join(fixture.distDir, 'current', 'v2', 'jobs', `${String(job.slug)}.json`), 'utf8'),
    )
    expect(served).toEqual(job)
    const bounds = (limits: JsonObject) => [limits.minimum, limits.maximum]
    const v2List = schemas.V2List!.properties as Record<string, JsonObject>
    expect(bounds(v2List.limit!)).toEqual([1, 100])
    // page is null on a page asked for by cursor; a number has the same bounds as before.
    expect((v2List.page!.anyOf as JsonObject[]).map(bounds)).toEqual([
      [1, undefined],
      [undefined, undefined],
    ])
    const company = schemas.V2Company!.properties as Record<string, JsonObject>
    expect(bounds(company.work_life_score!)).toEqual([0, 100])
    const error = (schemas.ErrorResponse!.properties as Record<string, JsonObject>).error!.properties as Record<
      string,
      JsonObject
    >
    expect(bounds(error.code!)).toEqual([400, 599])
  })

  it('describes every operation parameter', () => {
    const missing: string[] = []
    for (const [route, item] of Object.entries(doc.paths as JsonObject)) {
      const get = (item as JsonObject).get as JsonObject
      for (const parameter of (get.parameters as JsonObject[]) ?? []) {
        if (typeof parameter.description !== 'string' || parameter.description === '')
          missing.push(`${route} ${String(parameter.name)}`)
      }
    }
    expect(missing).toEqual([])
  })

  it('names the public URL first, then this server: a generated client in Node gets an absolute base URL', () => {
    expect(doc.servers).toEqual([
      { url: 'https://jobsnap.example', description: expect.any(String) },
      { url: '/', description: expect.stringContaining('This server') },
    ])
  })

  it('reads the same with a YAML 1.1 reader (js-yaml, in Swagger UI): no date-time example turns into a date', async () => {
    const text = await readFile(docPath, 'utf8')
    // YAML 1.1 types a plain 2026-11-21T18:11:49Z as a timestamp, yes/no/on/off as booleans.
    const asYaml11 = parseYaml(text, { version: '1.1' })
    expect(JSON.parse(JSON.stringify(asYaml11))).toEqual(doc)
    expect(text).toMatch(/posted_at: "\d{4}-\d\d-\d\dT/)
  })

  it('writes no raw `<word` outside a code span in any description (Swagger UI would take it for HTML)', () => {
    const raw: string[] = []
    const walk = (value: Json | undefined, where: string) => {
      if (Array.isArray(value)) {
        for (const [i, v] of value.entries()) walk(v, `${where}/${i}`)
      } else if (isObject(value))
        for (const [key, inner] of Object.entries(value)) {
          if (key === 'description' && typeof inner === 'string') {
            const outside = inner.replace(/`[^`]*`/g, '')
            if (/<[A-Za-z!/?]/.test(outside)) raw.push(`${where}: ${inner}`)
          } else walk(inner, `${where}/${key}`)
        }
    }
    walk(doc, '#')
    expect(raw).toEqual([])
    // The check finds one when there is one.
    walk({ description: 'since=<snapshot id>' }, 'probe')
    expect(raw).toEqual(['probe: since=<snapshot id>'])
  })

  it('types every closed vocabulary as an enum (lists as comma lists of enum items), never a bare string', () => {
    const parameters = (route: string) =>
      Object.fromEntries(
        (((doc.paths as JsonObject)[route] as JsonObject).get as { parameters: JsonObject[] }).parameters.map((p) => [
          p.name,
          p,
        ]),
      ) as Record<string, JsonObject>
    const jobs = parameters('/api/v2/jobs')
    const companies = parameters('/api/v2/companies')
    const itemsOf = (p: JsonObject) => ((p.schema as JsonObject).items as JsonObject).enum
    expect(itemsOf(jobs.work_arrangement!)).toEqual(['onsite', 'hybrid', 'remote'])
    expect(itemsOf(jobs.facets!)).toEqual(expect.arrayContaining(['category', 'work_arrangement', 'company']))
    expect(itemsOf(companies.remote_level!)).toEqual(expect.arrayContaining(['fully_remote']))
    expect(itemsOf(parameters('/feeds/jobs.rss').work_arrangement!)).toEqual(['onsite', 'hybrid', 'remote'])
    for (const list of [jobs.work_arrangement!, jobs.facets!, jobs.category!, companies.remote_level!])
      expect([list.style, list.explode], String(list.name)).toEqual(['form', false])
    expect((jobs.sort!.schema as JsonObject).enum).toEqual(['date', 'salary'])
    expect((companies.sort!.schema as JsonObject).enum).toEqual(['name', 'jobs'])
    expect((companies.hires_worldwide!.schema as JsonObject).enum).toEqual(['true', 'false'])
  })

  it('gives every error response its own example, of its own status', () => {
    const missing: string[] = []
    let checked = 0
    const check = (response: JsonObject, where: string, status: string) => {
      const json = (response.content as JsonObject | undefined)?.['application/json'] as JsonObject | undefined
      if (!json) return
      checked++
      const examples = Object.values((json.examples ?? {}) as JsonObject) as { value: { error: { code: number } } }[]
      if (examples.length === 0 || examples.some((e) => String(e.value.error.code) !== status))
        missing.push(`${where} ${status}`)
    }
    const components = (doc.components as JsonObject).responses as Record<string, JsonObject>
    const statusOf: Record<string, string> = {
      BadRequest: '400',
      UndecodablePath: '400',
      NotFound: '404',
      TooManyRequests: '429',
    }
    for (const [name, response] of Object.entries(components)) if (statusOf[name]) check(response, name, statusOf[name])
    for (const [route, item] of Object.entries(doc.paths as JsonObject))
      for (const [status, response] of Object.entries(((item as JsonObject).get as JsonObject).responses as JsonObject))
        if (Number(status) >= 400 && isObject(response) && !response.$ref) check(response, route, status)
    expect(missing).toEqual([])
    expect(checked).toBeGreaterThanOrEqual(6)
  })
})
