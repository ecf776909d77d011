/**
 * The JSON Schemas tools/list publishes, made from the tools' zod schemas (the
 * same ones that check arguments and type results) and trimmed, because every
 * agent pays for tools/list in tokens on every conversation: no `$schema`
 * (MCP reads tool schemas as JSON Schema 2020-12 when none is named), no
 * ±2^53 bounds zod puts on every integer (they say nothing), no `pattern`
 * beside a `format` that already says it, no `additionalProperties: {}` (the
 * default), and `additionalProperties: false` only on arguments, where it is
 * the rule, not on results; a shape used twice
 * is written once, under `$defs`.
 */
import { z } from 'zod'

type Json = Record<string, unknown>

/**
 * `defs` collects the shapes that carry a `title` (set with `.meta({ title })`
 * on a zod schema used more than once in a result): each is written once
 * under `$defs` and referred to by name. A title, unlike an `id`, never makes
 * the shape a component of the REST OpenAPI document.
 */
function trim(node: unknown, io: 'input' | 'output', defs: Record<string, unknown>): unknown {
  if (Array.isArray(node)) return node.map((item) => trim(item, io, defs))
  if (!node || typeof node !== 'object') return node
  const { title } = node as Json
  if (typeof title === 'string' && !(title in defs)) {
    const { title: _, ...shape } = node as Json
    defs[title] = trim(shape, io, defs)
  }
  if (typeof title === 'string') return { $ref: `#/$defs/${title}` }
  const out: Json = {}
  for (const [key, value] of Object.entries(node as Json)) {
    if (key === '$schema') continue
    if (key === 'minimum' && value === Number.MIN_SAFE_INTEGER) continue
    if (key === 'maximum' && value === Number.MAX_SAFE_INTEGER) continue
    if (key === 'pattern' && 'format' in (node as Json)) continue
    if (key === 'additionalProperties' && value === false && io === 'output') continue
    if (key === 'propertyNames' && JSON.stringify(value) === '{"type":"string"}') continue
    if (key === 'additionalProperties' && JSON.stringify(value) === '{}') continue
    out[key] = trim(value, io, defs)
  }
  return out
}

/**
 * zod writes no `default` for a default over a preprocess (a closed vocabulary
 * taken in any case, closed-enum.ts): the value is put back, so `sort` still
 * says it defaults to `date`.
 */
function keepDefault({ zodSchema, jsonSchema }: { zodSchema: unknown; jsonSchema: Json }): void {
  if (zodSchema instanceof z.ZodDefault && !('default' in jsonSchema)) jsonSchema.default = zodSchema.def.defaultValue
}

/** A tool's argument (`input`) or result (`output`) schema as tools/list lists it. */
export function toolJsonSchema(schema: z.ZodType, io: 'input' | 'output'): Json {
  const defs: Record<string, unknown> = {}
  const json = trim(
    z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any', override: keepDefault }),
    io,
    defs,
  ) as Json
  return Object.keys(defs).length ? { ...json, $defs: defs } : json
}
