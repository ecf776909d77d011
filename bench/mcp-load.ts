/**
 * MCP load through the real SDK client: several concurrent clients, each a
 * `Client` on a `StreamableHTTPClientTransport` (one initialize per client,
 * then one POST per call, as an agent would), each calling one tool in a
 * loop until the duration is over. The clients do not call tools/list, so the
 * SDK does not validate each result against the output schema: that would be
 * client CPU taken from the same two cores the server runs on.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { LatencyRecorder, type LoadResult } from './load.ts'
import { LOOPBACK } from '../support/processes.ts'

export interface McpLoadOptions {
  port: number
  clients: number
  seconds: number
  tool: string
  /** Arguments for the next call. */
  nextArgs: () => Record<string, unknown>
}

export async function runMcpLoad(options: McpLoadOptions): Promise<LoadResult> {
  const url = new URL(`http://${LOOPBACK}:${options.port}/api/mcp`)
  const clients = await Promise.all(
    Array.from({ length: options.clients }, async (_, i) => {
      const client = new Client({ name: `jobsnap-bench-${i}`, version: '1.0.0' })
      await client.connect(new StreamableHTTPClientTransport(url))
      return client
    }),
  )
  const recorder = new LatencyRecorder()
  const statuses: Record<string, number> = {}
  let errors = 0
  const started = performance.now()
  const deadline = started + options.seconds * 1000
  try {
    await Promise.all(
      clients.map(async (client) => {
        while (performance.now() < deadline) {
          const t0 = performance.now()
          try {
            const result = await client.callTool({ name: options.tool, arguments: options.nextArgs() })
            recorder.add(performance.now() - t0)
            if (result.isError) {
              errors++
              statuses['tool error'] = (statuses['tool error'] ?? 0) + 1
            }
          } catch (error) {
            recorder.add(performance.now() - t0)
            errors++
            const key = (error as Error).message.slice(0, 60)
            statuses[key] = (statuses[key] ?? 0) + 1
          }
        }
      }),
    )
  } finally {
    await Promise.all(clients.map((client) => client.close().catch(() => {})))
  }
  const seconds = (performance.now() - started) / 1000
  const { p50, p99, max } = recorder.summary()
  return { requests: recorder.count, seconds, rps: recorder.count / seconds, p50, p99, max, errors, statuses }
}

/** The size of tools/list's result as compact JSON: what every agent pays in tokens per conversation. */
export async function toolsListBytes(port: number): Promise<number> {
  const response = await fetch(`http://${LOOPBACK}:${port}/api/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  })
  const { result } = (await response.json()) as { result: unknown }
  return Buffer.byteLength(JSON.stringify(result))
}
