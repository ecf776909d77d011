/**
 * The runtime layer's public surface: a server over a published snapshot,
 * and the pure parts worth testing without one (the query engine over the
 * in-memory index, the rate limiters, the response cache, client identity).
 * The command line (runtime/cli.ts) is composed by the top-level cli.ts;
 * tests, the benchmark and support helpers import the runtime from here only.
 */
export { createApp } from './app/create-app.ts'
export { resolveClient, trustedProxyMatcher } from './http/client-id.ts'
export { computedPayload, storedEncodingsBytes, storedPayload } from './http/payload.ts'
export { ScratchBuffers } from './http/scratch-buffers.ts'
export { SlidingWindowLimiter, TokenBucketLimiter } from './http/rate-limit.ts'
export { ResponseCache } from './http/response-cache.ts'
export { LineWriter } from './ops/line-writer.ts'
export { watchGcPauses } from './ops/gc-pauses.ts'
export { MCP_MAX_BODY_BYTES } from './mcp/endpoint.ts'
export { BitArena } from './query/bit-arena.ts'
export { companyCursorAt, runCompanyQuery } from './query/companies.ts'
export { CompanyTable } from './query/company-table.ts'
export { JobIndex } from './query/job-index.ts'
export { jobCursorAt } from './query/seek.ts'
export { BitsetCache } from './query/intersect.ts'
export { SlugTable } from './query/slug-table.ts'
export { filterGroups, placeKeysForCountry, runV2Query } from './query/run-query.ts'
export { TextIndex } from './query/text-index.ts'
export { type RunningServer, startServer } from './server/start-server.ts'
export { ReloadTurns, reloadTurnClient, type TurnChannel } from './server/reload-turns.ts'
export { FileHashesBuilder } from './snapshot/file-hashes.ts'
export { createFileCache, type LoadedSnapshot, loadSnapshot, queryContext } from './snapshot/load.ts'
export { SnapshotHolder } from './snapshot/holder.ts'
