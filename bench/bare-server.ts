/**
 * The floor references of `npm run bench`: a server that does nothing but
 * return one fixed body (the bytes of a real single-job response, with the
 * same content type), either on bare `node:http` or as a one-route h3 app
 * served through srvx as jobsnap is. What jobsnap adds on top of either is
 * its own per-request cost. `node-headers` is bare node:http sending, besides
 * the body, the header fields a real jobsnap response of that kind carries
 * (a JSON list of [name, value] pairs in HEADERS_FILE), the same values every
 * time: Node validates and writes each field, so the number of fields alone
 * moves the floor.
 *
 *   npx tsx bench/bare-server.ts node|h3|node-headers PORT FILE [HEADERS_FILE]
 */
import { readFileSync } from 'node:fs'
import { createServer } from 'node:http'
import { H3, serve } from 'h3'
import { FastResponse } from 'srvx'

const [kind, portText, file, headersFile] = process.argv.slice(2)
if (
  (kind !== 'node' && kind !== 'h3' && kind !== 'node-headers') ||
  !portText ||
  !file ||
  (kind === 'node-headers' && !headersFile)
) {
  console.error('usage: bench/bare-server.ts node|h3|node-headers PORT FILE [HEADERS_FILE]')
  process.exit(2)
}
const port = Number(portText)
const body = readFileSync(file)
const headers: [string, string][] = [
  ['content-type', 'application/json; charset=utf-8'],
  ['content-length', String(body.length)],
]

if (kind !== 'h3') {
  // Flattened once: Array#flat per request would cost more than the fields themselves.
  const flat = (
    kind === 'node' ? headers : (JSON.parse(readFileSync(headersFile!, 'utf8')) as [string, string][])
  ).flat()
  createServer((_request, response) => {
    response.writeHead(200, flat)
    response.end(body)
  }).listen(port, '127.0.0.1')
} else {
  const app = new H3()
  app.get('/**', () => new FastResponse(body, { headers }))
  serve(app, { port, hostname: '127.0.0.1', silent: true, gracefulShutdown: false })
}
