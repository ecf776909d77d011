#!/usr/bin/env node
// The `jobsnap` command for `npx jobsnap` / `npm link`: the sources are TypeScript run
// through tsx (as `npm start` does), so there is no separate compile step to forget.
import { register } from 'tsx/esm/api'

register()
await import('../cli.ts')
