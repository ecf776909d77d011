#!/usr/bin/env node
// The `jobsnap` command for `npx jobsnap` / `npm link`, and what `npm start` and `npm run build` run:
// the sources are TypeScript run through tsx, so there is no separate compile step to forget. `serve` runs
// from a bundle of the same sources, remade whenever one changes (bundle.mjs says why).
// `build`, `serve` and `generate` first rerun themselves with huge pages for their buffers (huge-pages.mjs says why).
import { serveBundle } from './bundle.mjs'
import { rerunWithHugePages } from './huge-pages.mjs'

if (!rerunWithHugePages()) {
  const bundle = process.argv.slice(2).find((arg) => !arg.startsWith('-')) === 'serve' ? await serveBundle() : undefined
  if (bundle === undefined) {
    const { register } = await import('tsx/esm/api')
    register()
    await import('../cli.ts')
  } else await import(bundle)
}
