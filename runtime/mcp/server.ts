/**
 * The MCP server object: the six tools registered over one snapshot. A fresh
 * one is made per HTTP request (stateless transport), which costs
 * microseconds and leaves no session state to grow or to leak across
 * snapshot swaps.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv'
import type { LoadedSnapshot } from '../snapshot.ts'
import { renderMarketStats } from './market-stats.ts'
import {
  explainSchedule,
  ExplainScheduleInput,
  ExplainScheduleOutput,
  getCompany,
  GetCompanyInput,
  GetCompanyOutput,
  getJob,
  GetJobInput,
  GetJobOutput,
  marketStats,
  MarketStatsSchema,
  renderExplainSchedule,
  renderGetCompany,
  renderGetJob,
  renderSearchCompanies,
  renderSearchJobs,
  searchCompanies,
  SearchCompaniesInput,
  SearchCompaniesOutput,
  searchJobs,
  SearchJobsInput,
  SearchJobsOutput,
  TOOL_DESCRIPTIONS,
} from './tools.ts'

const MCP_SERVER_INFO = { name: 'jobsnap', title: 'jobsnap job listings', version: '1.0.0' }

const READ_ONLY = { readOnlyHint: true, openWorldHint: false, idempotentHint: true, destructiveHint: false } as const

const INSTRUCTIONS =
  'Read-only access to live job listings and the employers behind them, with a focus on working-hours policies. Use search_jobs / search_companies to find slugs, then get_job / get_company for details. Use explain_schedule_type before describing a schedule to a user: compressed hours is never a four-day week.'

function reply<T extends object>(structured: T, text: string) {
  return { content: [{ type: 'text' as const, text }], structuredContent: structured as Record<string, unknown> }
}

/**
 * The SDK builds a new Ajv instance per server unless given one (~50 us a
 * request here, for elicitation schemas this server never uses); one is shared.
 */
const jsonSchemaValidator = new AjvJsonSchemaValidator()

export function createMcpServer(snapshot: LoadedSnapshot, now: number): McpServer {
  const server = new McpServer(MCP_SERVER_INFO, {
    capabilities: { tools: {} },
    instructions: INSTRUCTIONS,
    jsonSchemaValidator,
  })

  server.registerTool(
    'search_jobs',
    {
      title: 'Search jobs',
      description: TOOL_DESCRIPTIONS.search_jobs,
      inputSchema: SearchJobsInput,
      outputSchema: SearchJobsOutput,
      annotations: READ_ONLY,
    },
    async (args) => {
      const result = searchJobs(snapshot, args, now)
      return reply(result, renderSearchJobs(result))
    },
  )
  server.registerTool(
    'get_job',
    {
      title: 'Get a job',
      description: TOOL_DESCRIPTIONS.get_job,
      inputSchema: GetJobInput,
      outputSchema: GetJobOutput,
      annotations: READ_ONLY,
    },
    async ({ slug }) => {
      const result = getJob(snapshot, slug, now)
      return reply(result, renderGetJob(result))
    },
  )
  server.registerTool(
    'search_companies',
    {
      title: 'Search employers',
      description: TOOL_DESCRIPTIONS.search_companies,
      inputSchema: SearchCompaniesInput,
      outputSchema: SearchCompaniesOutput,
      annotations: READ_ONLY,
    },
    async (args) => {
      const result = searchCompanies(snapshot, args, now)
      return reply(result, renderSearchCompanies(result))
    },
  )
  server.registerTool(
    'get_company',
    {
      title: 'Get an employer',
      description: TOOL_DESCRIPTIONS.get_company,
      inputSchema: GetCompanyInput,
      outputSchema: GetCompanyOutput,
      annotations: READ_ONLY,
    },
    async ({ slug }) => {
      const result = getCompany(snapshot, slug, now)
      return reply(result, renderGetCompany(result))
    },
  )
  server.registerTool(
    'get_market_stats',
    {
      title: 'Market statistics',
      description: TOOL_DESCRIPTIONS.get_market_stats,
      outputSchema: MarketStatsSchema,
      annotations: READ_ONLY,
    },
    async () => {
      const result = marketStats(snapshot, now)
      return reply(result, renderMarketStats(result))
    },
  )
  server.registerTool(
    'explain_schedule_type',
    {
      title: 'Explain schedule types',
      description: TOOL_DESCRIPTIONS.explain_schedule_type,
      inputSchema: ExplainScheduleInput,
      outputSchema: ExplainScheduleOutput,
      annotations: READ_ONLY,
    },
    async (args) => {
      const result = explainSchedule(args)
      return reply(result, renderExplainSchedule(result))
    },
  )
  return server
}
