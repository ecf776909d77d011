/**
 * The build layer's public surface: dataset -> validated records -> a
 * published snapshot, plus the sample-data generator. The command line
 * (build/cli.ts) is composed by the top-level cli.ts; tests, the benchmark
 * and support helpers import the build from here only.
 */
export { type BuildResult, buildSnapshot } from './build.ts'
export { CHANGED_PATHS_FILE, CHANGED_TAGS_FILE } from './changed-files.ts'
export { JobFileList, JobFileListBuilder } from './job-files.ts'
export { runPurge } from './purge.ts'
export { diffSnapshots } from './changes.ts'
export { generateDataset } from './generate.ts'
export { DatasetInvalidError, type DatasetIssue } from './issues.ts'
export { type Dataset, loadDataset } from './load-dataset.ts'
export { PackedBodiesWriter, type PreviousBodies } from './packed-bodies.ts'
export { createProgress } from './progress.ts'
export { listSnapshots, pointCurrentAt, rollbackSnapshot } from './publish.ts'
export { readRecordTexts } from './read-dataset.ts'
export { CompanyHashTable, companyHash } from './record-cache.ts'
export { toV1Job, toV2Job } from './transform.ts'
