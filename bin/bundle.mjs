/**
 * `jobsnap serve` runs from one JavaScript file that esbuild bundles from the
 * TypeScript sources, not through tsx's loader. tsx resolves and loads every
 * module, node_modules included, through hooks on a separate thread: a server's
 * modules took ~0.85 s from process start to loaded that way and ~0.5 s as a
 * bundle (0.3 s with node_modules bundled too), per process, and a cluster
 * starts one primary and N workers on the same cores.
 *
 * The bundle lives in node_modules/.cache/jobsnap (so the packages it leaves
 * out resolve as they would from the sources), a folder named by esbuild's and
 * Node's versions and its content, and is rebuilt (~0.1 s) whenever a source
 * file it was made from changed size or modification time since: editing a
 * file and restarting runs the edit. Written to a temporary name and renamed,
 * so servers starting together never read half of one. Where it cannot be
 * written (a read-only install), serve runs through tsx as the other commands do.
 *
 * Only `serve` runs bundled: the build starts worker threads from its own
 * source files, which a bundle would not have beside it.
 */
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const require = createRequire(import.meta.url)

/**
 * @typedef {{ path: string, size: number, mtimeMs: number }} InputStamp
 * @typedef {{ dir: string, inputs: InputStamp[] }} BundleStamp
 */

/** Entry file of a bundle folder. */
const ENTRY_FILE = 'cli.mjs'
/** How long a bundle folder no stamp names is kept for a server that may still be starting from it. */
const SUPERSEDED_KEPT_MS = 10 * 60_000

/** @param {string} file @returns {InputStamp | undefined} */
function stampOf(file) {
  try {
    const stat = statSync(file)
    return { path: file, size: stat.size, mtimeMs: stat.mtimeMs }
  } catch {
    return undefined
  }
}

/**
 * The bundle folder the stamp names, when every input is still the size and age it was when it was made.
 * @param {string} stampFile
 * @returns {string | undefined}
 */
function freshBundleDir(stampFile) {
  /** @type {BundleStamp} */
  let stamp
  try {
    stamp = JSON.parse(readFileSync(stampFile, 'utf8'))
  } catch {
    return undefined
  }
  const fresh = stamp.inputs.every((input) => {
    const now = stampOf(input.path)
    return now !== undefined && now.size === input.size && now.mtimeMs === input.mtimeMs
  })
  const dir = path.join(path.dirname(stampFile), stamp.dir)
  return fresh && existsSync(path.join(dir, ENTRY_FILE)) ? dir : undefined
}

/**
 * The entry of an up-to-date bundle of cli.ts for `serve`, made now if it is missing or stale; undefined
 * when it cannot be made (esbuild missing, a read-only node_modules), after saying why on stderr.
 * @param {{ entry?: string, cacheDir?: string }} [where] what to bundle and where to keep it (tests use others)
 * @returns {Promise<string | undefined>}
 */
export async function serveBundle({
  entry = path.join(REPO_ROOT, 'cli.ts'),
  cacheDir = path.join(REPO_ROOT, 'node_modules', '.cache', 'jobsnap'),
} = {}) {
  try {
    // esbuild's version from its package.json: importing esbuild itself (~50 ms) is only needed to bundle.
    const esbuildVersion = JSON.parse(readFileSync(require.resolve('esbuild/package.json'), 'utf8')).version
    const key = createHash('sha256').update(`${esbuildVersion} ${process.version} ${entry}`).digest('hex').slice(0, 16)
    const stampFile = path.join(cacheDir, `serve-${key}.json`)
    const fresh = freshBundleDir(stampFile)
    if (fresh !== undefined) return path.join(fresh, ENTRY_FILE)
    mkdirSync(cacheDir, { recursive: true })
    const startedMs = Date.now()
    const outdir = path.join(cacheDir, 'unwritten')
    const esbuild = await import('esbuild')
    const result = await esbuild.build({
      entryPoints: { cli: entry },
      absWorkingDir: REPO_ROOT,
      bundle: true,
      // What cli.ts and the server import lazily stays in chunks loaded when imported (a cluster's primary
      // never loads the server; a worker loads the MCP endpoint after its first snapshot): one file would
      // import every package the server uses before anything runs.
      splitting: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      packages: 'external',
      outdir,
      outExtension: { '.js': '.mjs' },
      chunkNames: 'chunk-[hash]',
      // Not minified, and with source maps beside it: a stack trace names the functions, and
      // NODE_OPTIONS=--enable-source-maps maps it to the TypeScript lines (not on by default: ~0.1 s a start).
      sourcemap: 'linked',
      metafile: true,
      write: false,
      logLevel: 'silent',
      plugins: [buildStaysOut],
    })
    const inputs = Object.keys(result.metafile.inputs).map((input) => path.resolve(REPO_ROOT, input))
    const stamps = inputs.map(stampOf).filter((stamp) => stamp !== undefined)
    const outputs = result.outputFiles.map((file) => ({
      name: path.relative(outdir, file.path),
      contents: file.contents,
    }))
    const contentHash = createHash('sha256')
    for (const { name, contents } of outputs) contentHash.update(name).update(contents)
    // A folder per content, renamed into place whole: a server starting meanwhile from another folder, or
    // from this one made by a concurrent start, never sees part of one.
    const dirName = `serve-${key}-${contentHash.digest('hex').slice(0, 12)}`
    const dir = path.join(cacheDir, dirName)
    if (!existsSync(dir)) {
      const pending = `${dir}.${process.pid}.tmp`
      mkdirSync(pending, { recursive: true })
      for (const { name, contents } of outputs) writeFileSync(path.join(pending, name), contents)
      try {
        renameSync(pending, dir)
      } catch {
        rmSync(pending, { recursive: true, force: true })
      }
    }
    // A file edited while esbuild read it may be in the bundle as it was: then no stamp is written, and the
    // next start bundles again rather than trusting this one.
    const editedMeanwhile = stamps.length < inputs.length || stamps.some((stamp) => stamp.mtimeMs >= startedMs - 1)
    if (!editedMeanwhile) {
      const suffix = `.${process.pid}.tmp`
      writeFileSync(stampFile + suffix, JSON.stringify({ dir: dirName, inputs: stamps }))
      renameSync(stampFile + suffix, stampFile)
    }
    pruneSuperseded(cacheDir, `serve-${key}-`, dirName)
    return path.join(dir, ENTRY_FILE)
  } catch (error) {
    const reason = error instanceof Error ? error.message.split('\n')[0] : String(error)
    console.error(`jobsnap: serving through tsx, could not bundle the server (${reason})`)
    return undefined
  }
}

/**
 * Removes this key's other bundle folders once they are old enough that no server is still starting
 * from one (a running server has loaded its modules already).
 * @param {string} cacheDir @param {string} prefix @param {string} keep
 */
function pruneSuperseded(cacheDir, prefix, keep) {
  for (const name of readdirSync(cacheDir)) {
    if (!name.startsWith(prefix) || name === keep) continue
    const folder = path.join(cacheDir, name)
    const age = Date.now() - (stampOf(folder)?.mtimeMs ?? Date.now())
    if (age > SUPERSEDED_KEPT_MS) rmSync(folder, { recursive: true, force: true })
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
