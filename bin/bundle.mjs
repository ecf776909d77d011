/**
 * `jobsnap serve` runs from one JavaScript file that esbuild bundles from the
 * TypeScript sources, not through tsx's loader. tsx resolves and loads every
 * module, node_modules included, through hooks on a separate thread: a server's
 * modules took ~0.85 s from process start to loaded that way and ~0.5 s as a
 * bundle (0.3 s with node_modules bundled too), per process, and a cluster
 * starts one primary and N workers on the same cores.
 *
 * The bundle lives in node_modules/.cache/jobsnap (so the packages it leaves
 * out resolve as they would from the sources), named by esbuild's and Node's
 * versions, and is rebuilt (~0.1 s) whenever a source file it was made from
 * changed size or modification time since: editing a file and restarting runs
 * the edit. Written to a temporary name and renamed, so servers starting
 * together never read half a file. Where it cannot be written (a read-only
 * install), serve runs through tsx as the other commands do.
 *
 * Only `serve` runs bundled: the build starts worker threads from its own
 * source files, which a bundle would not have beside it.
 */
import { createHash } from 'node:crypto'
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')

/**
 * @typedef {{ path: string, size: number, mtimeMs: number }} InputStamp
 * @typedef {{ inputs: InputStamp[] }} BundleStamp
 */

/** @param {string} file @returns {InputStamp | undefined} */
function stampOf(file) {
  try {
    const stat = statSync(file)
    return { path: file, size: stat.size, mtimeMs: stat.mtimeMs }
  } catch {
    return undefined
  }
}

/** True when every input is still the size and age it was when the bundle was made. @param {string} stampFile */
function isFresh(stampFile) {
  /** @type {BundleStamp} */
  let stamp
  try {
    stamp = JSON.parse(readFileSync(stampFile, 'utf8'))
  } catch {
    return false
  }
  return stamp.inputs.every((input) => {
    const now = stampOf(input.path)
    return now !== undefined && now.size === input.size && now.mtimeMs === input.mtimeMs
  })
}

/**
 * The path of an up-to-date bundle of cli.ts for `serve`, made now if it is missing or stale; undefined
 * when it cannot be made (esbuild missing, a read-only node_modules), after saying why on stderr.
 * @param {{ entry?: string, cacheDir?: string }} [where] what to bundle and where to keep it (tests use others)
 * @returns {Promise<string | undefined>}
 */
export async function serveBundle({
  entry = path.join(REPO_ROOT, 'cli.ts'),
  cacheDir = path.join(REPO_ROOT, 'node_modules', '.cache', 'jobsnap'),
} = {}) {
  try {
    const esbuild = await import('esbuild')
    const key = createHash('sha256').update(`${esbuild.version} ${process.version} ${entry}`).digest('hex').slice(0, 16)
    const bundleFile = path.join(cacheDir, `serve-${key}.mjs`)
    const stampFile = `${bundleFile}.inputs.json`
    if (isFresh(stampFile)) return bundleFile
    mkdirSync(cacheDir, { recursive: true })
    const startedMs = Date.now()
    const result = await esbuild.build({
      entryPoints: [entry],
      absWorkingDir: REPO_ROOT,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      packages: 'external',
      sourcemap: 'linked',
      metafile: true,
      write: false,
      outfile: bundleFile,
      logLevel: 'silent',
      // Not minified, and with a source map beside it: a stack trace names the functions, and
      // NODE_OPTIONS=--enable-source-maps maps it to the TypeScript lines (not on by default: ~0.1 s a start).
      plugins: [buildStaysOut],
    })
    const inputs = Object.keys(result.metafile.inputs).map((input) => path.resolve(REPO_ROOT, input))
    const stamps = inputs.map(stampOf).filter((stamp) => stamp !== undefined)
    const suffix = `.${process.pid}.tmp`
    for (const file of result.outputFiles) writeFileSync(file.path + suffix, file.contents)
    for (const file of result.outputFiles) renameSync(file.path + suffix, file.path)
    // A file edited while esbuild read it may be in the bundle as it was: then no stamp is written, and the
    // next start bundles again rather than trusting this one.
    const editedMeanwhile = stamps.length < inputs.length || stamps.some((stamp) => stamp.mtimeMs >= startedMs - 1)
    if (!editedMeanwhile) {
      writeFileSync(stampFile + suffix, JSON.stringify({ inputs: stamps }))
      renameSync(stampFile + suffix, stampFile)
    }
    return bundleFile
  } catch (error) {
    const reason = error instanceof Error ? error.message.split('\n')[0] : String(error)
    console.error(`jobsnap: serving through tsx, could not bundle the server (${reason})`)
    return undefined
  }
}

/**
 * The build pipeline is left out of the serve bundle (cli.ts imports it only for `build` and
 * `generate`, which run through tsx): its worker threads load their own source files.
 * @type {import('esbuild').Plugin}
 */
const buildStaysOut = {
  name: 'jobsnap-build-stays-out',
  setup(build) {
    build.onResolve({ filter: /^\.\/build\// }, (args) => ({
      path: path.join(args.resolveDir, args.path),
      external: true,
    }))
  },
}
