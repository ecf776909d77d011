/**
 * The server's logs, with pino: JSON lines (one object per line, `time` and
 * `message` first) for log shippers, pino-pretty on a terminal. Events
 * (started, snapshot loaded, shutting down) and one access line per request
 * go through the same logger, so they interleave in order.
 */
import cluster from 'node:cluster'
import { createRequire } from 'node:module'
import pino from 'pino'
import type { Config } from '../../core/config.ts'
import { LineWriter } from './line-writer.ts'

/**
 * pino-pretty, loaded only when the format is pretty (a terminal): every server process imports this module,
 * and a cluster's workers and a production log (JSON) never use it.
 */
const loadPretty = () => createRequire(import.meta.url)('pino-pretty') as typeof import('pino-pretty')

type LogLevel = 'info' | 'warn' | 'error'

/** An event: a message and its fields (errors carry their stack in `error`, in the log only). */
export type Logger = (message: string, fields?: Record<string, unknown>, level?: LogLevel) => void

/** What the access line says about one request. */
export interface AccessLine {
  method: string
  path: string
  status: number
  /** Bytes written to the socket for this response, head and body. */
  bytes: number
  duration_ms: number
  client: string
  /** X-Cache of the response (HIT, MISS, BYPASS), when it has one. */
  cache?: string
  request_id: string
  /** The client went away before the whole response was written. */
  aborted?: true
}

export interface Logs {
  log: Logger
  /** Absent when access lines are off (JOBSNAP_ACCESS_LOG=false, or JOBSNAP_LOG=silent). */
  access?: (line: AccessLine) => void
  /** Writes out what is buffered; call before the process exits. */
  flush(): void
}

const SILENT_LOGS: Logs = { log: () => {}, flush: () => {} }

export function createLogs(config: Config): Logs {
  const format = config.JOBSNAP_LOG ?? (process.stdout.isTTY ? 'pretty' : 'json')
  if (format === 'silent') return SILENT_LOGS
  // JSON lines go through one small synchronous buffer (see line-writer.ts); flush() empties it on the way out.
  const lines = format === 'pretty' ? undefined : new LineWriter(process.stdout.fd)
  const destination =
    lines ??
    loadPretty()({ messageKey: 'message', translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname', sync: true })
  const logger = pino(
    {
      messageKey: 'message',
      timestamp: pino.stdTimeFunctions.isoTime,
      // Which process wrote the line, with --workers N; a single process adds nothing.
      base: cluster.isWorker ? { worker: process.pid } : undefined,
      formatters: { level: (label) => ({ level: label }) },
    },
    destination,
  )
  // A short-lived process (a test, a crash) must not leave lines in the buffer.
  const flush = () => lines?.flush()
  // Access lines have one fixed shape and come at every request: formatted here in one template (a fraction
  // of a microsecond) rather than by pino's general serializer (~5 us a line, a tenth of a cached request's
  // whole cost), then written to the same line buffer as pino's lines, so the two interleave in order.
  const prefix = `{"level":"info","time":"`
  const bindings = cluster.isWorker ? `,"worker":${process.pid}` : ''
  let isoMs = 0
  let iso = ''
  const accessLine = (line: AccessLine): string => {
    const ms = Date.now()
    if (ms !== isoMs) {
      isoMs = ms
      iso = new Date(ms).toISOString()
    }
    return `${prefix}${iso}"${bindings},"method":${JSON.stringify(line.method)},"path":${JSON.stringify(line.path)},"status":${line.status},"bytes":${line.bytes},"duration_ms":${line.duration_ms},"client":${JSON.stringify(line.client)}${line.cache === undefined ? '' : `,"cache":${JSON.stringify(line.cache)}`},"request_id":${JSON.stringify(line.request_id)}${line.aborted ? ',"aborted":true' : ''},"message":"request"}\n`
  }
  return {
    // Events are rare and tests and operators wait for them: each is written out at once.
    log: (message, fields, level = 'info') => {
      logger[level](fields ?? {}, message)
      flush()
    },
    access: config.JOBSNAP_ACCESS_LOG ? (line) => destination.write(accessLine(line)) : undefined,
    flush,
  }
}
