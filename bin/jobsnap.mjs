#!/usr/bin/env node
// The `jobsnap` command for `npx jobsnap` / `npm link`, and what `npm start` and `npm run build` run:
// the sources are TypeScript run through tsx, so there is no separate compile step to forget.
// `build`, `serve` and `generate` first rerun themselves with huge pages for their buffers (huge-pages.mjs says why).
import { rerunWithHugePages } from './huge-pages.mjs'

if (!rerunWithHugePages()) {
  const { register } = await import('tsx/esm/api')
  register()
  await import('../cli.ts')
}
