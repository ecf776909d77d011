/**
 * A closed vocabulary as a tool argument: the values tools/list publishes
 * (lower case, as `enum`), taken in any letter case, as REST takes them and
 * as the open vocabularies (category, skills) are. `"Senior"` is `senior`,
 * not a tool error; a value outside the list still is one, naming the list.
 */
import { z } from 'zod'

const lowerCase = (value: unknown) => (typeof value === 'string' ? value.toLowerCase() : value)

export function closedEnum<const T extends readonly [string, ...string[]]>(values: T) {
  // A preprocess keeps the enum in the published input schema (a transform after it would not).
  return z.preprocess(lowerCase, z.enum(values))
}
