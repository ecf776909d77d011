/**
 * JSON-RPC errors the MCP handlers throw. The SDK answers any thrown error
 * with its `code` when it has one; its own McpError would prefix the message
 * with "MCP error -32602:", which the client's McpError then repeats.
 */
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js'

/** -32602: the request's params (a tool's or prompt's arguments, a tool or prompt name) do not fit. */
export class InvalidParamsError extends Error {
  readonly code = ErrorCode.InvalidParams
}

/** -32002, the MCP spec's code for a resource URI that names nothing. */
export class ResourceNotFoundError extends Error {
  readonly code = -32002
}

/** A tool that ran and could not answer: returned as a result with isError, its message saying what to do. */
export class ToolError extends Error {}
