/**
 * What no route matched: another spelling of a known path is redirected
 * (a REST one through its envelope, so it is counted), and anything else is
 * a 404 that, under /api/v1 and /api/v2, is a v1 or v2 answer like any other.
 */
import type { H3 } from 'h3'
import { canonicalPath } from '../http/canonical-path.ts'
import { httpError } from '../http/errors.ts'
import type { RestContext } from '../routes/context.ts'
import { redirectTo, spelledPathOf } from './methods.ts'
import type { RestEnvelope } from './rest-envelope.ts'

export function addNotFoundRoute(app: H3, { rest }: RestEnvelope): void {
  app.all('/**', (event) => {
    const { pathname } = event.url
    // Another spelling of a REST path (/API/V1, //api/v1) is that path's, redirected by its envelope.
    const canonical = canonicalPath(spelledPathOf(event))
    if (canonical?.version)
      return rest(canonical.version, () => {
        throw new Error('unreachable: the envelope redirects another spelling before the handler runs')
      })(event)
    if (canonical) return redirectTo(canonical.path + event.url.search)
    const notFound = (ctx?: RestContext) => {
      throw httpError(404, `No endpoint at ${pathname.slice(0, 200)}. See /openapi.yaml or /docs.`, {
        headers: ctx?.headers,
      })
    }
    // Under /api/v1 and /api/v2 a 404 is a v1 or v2 answer like any other: counted, with the rate-limit headers.
    const [first, second] = pathname.split('/').filter(Boolean)
    const version =
      first?.toLowerCase() === 'api' && /^v[12]$/i.test(second ?? '')
        ? (second!.toLowerCase() as 'v1' | 'v2')
        : undefined
    return version ? rest(version, notFound)(event) : notFound()
  })
}
