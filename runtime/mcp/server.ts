/**
 * The MCP server object: the eight tools over one snapshot. A fresh one is made
 * per HTTP request (stateless transport), which costs microseconds and leaves
 * no session state to grow or to leak across snapshot swaps.
 *
 * Also two resource templates (a job, an employer), the find_jobs prompt, and
 * completion of their arguments.
 *
 * Built on the SDK's low-level Server rather than McpServer, which turns every
 * failure into a tool result: here an unknown tool is a protocol error
 * (-32602 Invalid params, naming the tools there are), while arguments the
 * tool's schema refuses (wrong type, unknown argument, a value outside a
 * closed vocabulary) are a result with `isError: true` naming what is
 * allowed, as the 2025-11-25 spec asks (SEP-1303): many hosts never show a
 * protocol error to the model, which could then not retry. A tool that ran
 * and could not answer returns `isError: true` too. The tool list is computed once per process, and the
 * capabilities say `listChanged: false`: a stateless endpoint has no channel
 * to announce a change on.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import {
  CallToolRequestSchema,
  type CallToolResult,
  CompleteRequestSchema,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js'
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv'
import { z } from 'zod'
import type { LoadedSnapshot } from '../snapshot/load.ts'
import { InvalidParamsError, ToolError } from './errors.ts'
import { describeIssues } from '../../core/issue-wording.ts'
import { toolJsonSchema } from './json-schema.ts'
import { completePromptArgument, getPrompt, PROMPTS } from './prompts.ts'
import { ListFiltersInput, ListFiltersOutput, listFilters } from './list-filters.ts'
import { completeResourceArgument, RESOURCE_TEMPLATES, readResource } from './resources.ts'
import { SalaryBenchmarksInput, SalaryBenchmarksOutput, salaryBenchmarks } from './salary-benchmarks.ts'
import {
  ExplainScheduleInput,
  ExplainScheduleOutput,
  explainSchedule,
  GetCompanyInput,
  GetCompanyOutput,
  GetJobInput,
  GetJobOutput,
  getCompany,
  getJob,
  MarketStatsSchema,
  marketStats,
  SearchCompaniesInput,
  SearchCompaniesOutput,
  SearchJobsInput,
  SearchJobsOutput,
  searchCompanies,
  searchJobs,
  TOOL_DESCRIPTIONS,
} from './tools.ts'

const SERVER_INFO = { name: 'jobsnap', title: 'jobsnap job listings', version: '1.0.0' }

/**
 * Read-only. The destructive and idempotent hints apply only to tools that
 * write, so they are left out; so is openWorldHint (false: these tools see
 * only the snapshot), whose ~180 bytes on every tools/list bought less than
 * the schemas they made room for.
 */
const READ_ONLY = { readOnlyHint: true } as const

const INSTRUCTIONS =
  'Read-only access to live job listings and the employers behind them, with a focus on working-hours policies. Use search_jobs / search_companies to find slugs, then get_job / get_company for details. Use explain_schedule_type before describing a schedule to a user: compressed hours is never a four-day week.'

interface ToolDefinition {
  name: keyof typeof TOOL_DESCRIPTIONS
  input: z.ZodObject
  output: z.ZodType
  run(snapshot: LoadedSnapshot, args: never, now: number): object
}

/** Typed at each definition, stored untyped: the call handler has validated `args` against `input`. */
function tool<I extends z.ZodObject>(definition: {
  name: keyof typeof TOOL_DESCRIPTIONS
  input: I
  output: z.ZodType
  run(snapshot: LoadedSnapshot, args: z.infer<I>, now: number): object
}): ToolDefinition {
  return definition as ToolDefinition
}

/** get_market_stats takes no arguments, and says so: any argument is refused. */
const NO_ARGUMENTS = z.strictObject({})

const TOOLS: ToolDefinition[] = [
  tool({
    name: 'search_jobs',
    input: SearchJobsInput,
    output: SearchJobsOutput,
    run: searchJobs,
  }),
  tool({
    name: 'get_job',
    input: GetJobInput,
    output: GetJobOutput,
    run: (snapshot, { slug }, now) => getJob(snapshot, slug, now),
  }),
  tool({
    name: 'search_companies',
    input: SearchCompaniesInput,
    output: SearchCompaniesOutput,
    run: searchCompanies,
  }),
  tool({
    name: 'get_company',
    input: GetCompanyInput,
    output: GetCompanyOutput,
    run: (snapshot, { slug }, now) => getCompany(snapshot, slug, now),
  }),
  tool({
    name: 'get_market_stats',
    input: NO_ARGUMENTS,
    output: MarketStatsSchema,
    run: (snapshot, _args, now) => marketStats(snapshot, now),
  }),
  tool({
    name: 'list_filters',
    input: ListFiltersInput,
    output: ListFiltersOutput,
    run: listFilters,
  }),
  tool({
    name: 'get_salary_benchmarks',
    input: SalaryBenchmarksInput,
    output: SalaryBenchmarksOutput,
    run: salaryBenchmarks,
  }),
  tool({
    name: 'explain_schedule_type',
    input: ExplainScheduleInput,
    output: ExplainScheduleOutput,
    run: (_snapshot, args) => explainSchedule(args),
  }),
]

const TOOLS_BY_NAME = new Map(TOOLS.map((definition) => [definition.name, definition]))

/** tools/list, the same for every request and snapshot. */
const TOOL_LIST: Tool[] = TOOLS.map((definition) => ({
  name: definition.name,
  description: TOOL_DESCRIPTIONS[definition.name],
  inputSchema: toolJsonSchema(definition.input, 'input') as Tool['inputSchema'],
  outputSchema: toolJsonSchema(definition.output, 'output') as Tool['outputSchema'],
  annotations: READ_ONLY,
}))

/** Why `args` do not fit a tool's schema, in words that say what is allowed. */
function describeInvalidArguments(definition: ToolDefinition, args: unknown): string {
  // Parsed again with the input in each issue ("got 1.5"): only requests that failed pay for it.
  const issues = definition.input.safeParse(args, { reportInput: true }).error?.issues ?? []
  const allowed = Object.keys(definition.input.shape)
  const problems = issues
    .filter((issue) => issue.code === 'unrecognized_keys')
    .map(
      (issue) =>
        `unknown argument${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((key) => `"${key}"`).join(', ')} (${definition.name} takes ${allowed.length ? allowed.join(', ') : 'no arguments'})`,
    )
  problems.push(
    ...describeIssues(
      issues.filter((issue) => issue.code !== 'unrecognized_keys'),
      'arguments',
    ),
  )
  return `Invalid arguments for ${definition.name}: ${problems.join('; ')}.`
}

/**
 * Why `args` do not fit tool `name`'s schema, or undefined when they do (or there is no such tool).
 * For the endpoint, which sees arguments before the SDK does: the SDK's own parse drops a
 * `"__proto__"` member, so a tool never sees it to refuse it; the endpoint answers it as the
 * call handler answers any other unknown argument (toolErrorResult).
 */
export function invalidToolArguments(name: unknown, args: unknown): string | undefined {
  const definition = TOOLS_BY_NAME.get(name as ToolDefinition['name'])
  if (!definition || definition.input.safeParse(args).success) return undefined
  return describeInvalidArguments(definition, args)
}

/** A tool execution error: the model reads `message` and can retry. */
export function toolErrorResult(message: string): CallToolResult {
  return { content: [{ type: 'text', text: message }], isError: true }
}

/**
 * The SDK builds a new Ajv instance per server unless given one (~50 us a
 * request here, for elicitation schemas this server never uses); one is shared.
 */
const jsonSchemaValidator = new AjvJsonSchemaValidator()

export function createMcpServer(snapshot: LoadedSnapshot, now: number): Server {
  const server = new Server(SERVER_INFO, {
    capabilities: {
      tools: { listChanged: false },
      resources: { listChanged: false },
      prompts: { listChanged: false },
      completions: {},
    },
    instructions: INSTRUCTIONS,
    jsonSchemaValidator,
  })
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: TOOL_LIST }))
  server.setRequestHandler(CallToolRequestSchema, (request): CallToolResult => {
    const { name } = request.params
    const definition = TOOLS_BY_NAME.get(name as ToolDefinition['name'])
    if (!definition) {
      throw new InvalidParamsError(
        `Unknown tool "${String(name).slice(0, 100)}". This server's tools: ${TOOLS.map((t) => t.name).join(', ')}.`,
      )
    }
    const parsed = definition.input.safeParse(request.params.arguments ?? {})
    if (!parsed.success) return toolErrorResult(describeInvalidArguments(definition, request.params.arguments ?? {}))
    try {
      const structured = definition.run(snapshot, parsed.data as never, now)
      // The text block carries the same JSON, for clients that read only text.
      return {
        content: [{ type: 'text', text: JSON.stringify(structured) }],
        structuredContent: structured as Record<string, unknown>,
      }
    } catch (error) {
      if (error instanceof ToolError) return toolErrorResult(error.message)
      throw error
    }
  })
  // A job or an employer by URI; there is no list of every one (a million jobs), only the templates.
  server.setRequestHandler(ListResourcesRequestSchema, () => ({ resources: [] }))
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({ resourceTemplates: RESOURCE_TEMPLATES }))
  server.setRequestHandler(ReadResourceRequestSchema, (request) => readResource(snapshot, request.params.uri, now))
  server.setRequestHandler(ListPromptsRequestSchema, () => ({ prompts: PROMPTS }))
  server.setRequestHandler(GetPromptRequestSchema, (request) =>
    getPrompt(snapshot, request.params.name, request.params.arguments, now),
  )
  server.setRequestHandler(CompleteRequestSchema, (request) => {
    const { ref, argument } = request.params
    const completion =
      ref.type === 'ref/prompt'
        ? completePromptArgument(snapshot, ref.name, argument.name, argument.value, now)
        : completeResourceArgument(snapshot, ref.uri, argument.name, argument.value, now)
    return { completion }
  })
  return server
}
