/**
 * The core layer's public surface: the contracts build and runtime share
 * (configuration, dataset and response schemas, the snapshot's layout and
 * formats, hashes, query parsing, search terms, places and taxonomy). Build
 * and runtime import core's modules directly; everything outside the three
 * layers (tests, the benchmark, support helpers) imports from here only.
 */
export { ALL_TAG, fittingTags, isTag, MAX_TAG_BYTES, MAX_TAG_HEADER_BYTES, tagHeaderValues } from './cache-tags.ts'
export { type Config, type ConfigInput, DEFAULTS, loadConfig } from './config.ts'
export { contentHash, indexFileHash } from './content-hash.ts'
export { V2ExportsResponse } from './exports.ts'
export {
  allCountryCodes,
  countryContinent,
  countryName,
  regionsOfCountry,
  resolveCountry,
  type CountryCode,
} from './geo.ts'
export { CURSOR_MAX_LENGTH, encodeCursor } from './cursor.ts'
export { companyFiltersTag, parseV2CompanyQuery } from './company-query.ts'
export { orderByKey } from './index-derivations.ts'
export { openPackedBodies, PackedBodies } from './packed-bodies.ts'
export {
  JOB_BASE_HASHES,
  JOB_DELTA_LIST,
  JOB_WHITEOUTS,
  jobFileOnDisk,
  jobFilesThroughLayers,
  jobLayerBase,
} from './job-layers.ts'
export { JobIndexFileWriter, PostingLists, PreviousJobIndex, readJobIndexFile, VALUE_FACETS } from './job-index-file.ts'
export { packedJoined, textAt } from './packed-text.ts'
export { fileIdentity, readVerifiedFiles, VERIFIED_FILES } from './verified-files.ts'
export { parseV2ListQuery, V2_LIST_PARAMS, v2FiltersTag } from './query.ts'
export { formatSalary } from './salary.ts'
export {
  ErrorBody,
  V1Job,
  V1ListResponse,
  V2ChangesResponse,
  V2CompanyListResponse,
  V2CompanyProfile,
  V2FiltersResponse,
  V2Job,
  V2ListResponse,
} from './schema/api.ts'
export { DatasetCompany, DatasetJob, ExchangeRates } from './schema/dataset.ts'
export {
  FUZZY_MIN_TERM_LENGTH,
  MAX_QUERY_TERMS,
  MAX_TERM_EXPANSIONS,
  PREFIX_MIN_TERM_LENGTH,
  queryTerms,
  textTerms,
  queryTermsProblem,
  SerializedTerms,
} from './search.ts'
export {
  arrayInSlices,
  bodiesBaseTarget,
  CURRENT_LINK,
  type IndexedCompany,
  type IndexedJob,
  isCompressedCopy,
  jsonArrayByLine,
  PRECOMPUTED_V1_LIMITS,
  publishedSnapshotId,
  readJobIndexInSlices,
  readManifestInSlices,
  eachJobFile,
  SNAPSHOT_FORMAT,
  SNAPSHOTS_DIR,
  SnapshotCompanies,
  SnapshotJobIndex,
  SnapshotManifest,
  serializeJobIndex,
  serializeManifest,
  snapshotPaths,
  v1PageFrame,
  v1UsageNotice,
} from './snapshot.ts'
export { CATEGORY_LABELS, LEVEL_LABELS, SCHEDULE_TYPE_VALUES, WORK_ARRANGEMENTS } from './taxonomy.ts'
