/**
 * Progress for long builds: a live line on a terminal, a few plain log lines
 * elsewhere (CI), nothing when silenced.
 */
export interface Progress {
  step(label: string, done: number, total?: number): void
  log(message: string): void
  done(): void
}

export function createProgress(stream: NodeJS.WriteStream = process.stderr, silent = false): Progress {
  if (silent) return { step() {}, log() {}, done() {} }
  const live = stream.isTTY === true && !process.env.CI
  let lastLabel = ''
  let lastDecile = -1
  let lastDraw = 0
  return {
    step(label, done, total) {
      if (live) {
        const now = Date.now()
        if (now - lastDraw < 100 && done !== total) return
        lastDraw = now
        const pct = total ? ` ${Math.floor((done / total) * 100)}%` : ''
        stream.write(`\r\x1b[2K${label}: ${done.toLocaleString('en-US')}${total ? `/${total.toLocaleString('en-US')}` : ''}${pct}`)
        return
      }
      const decile = total ? Math.floor((done / total) * 10) : -1
      if (label !== lastLabel || (decile !== lastDecile && decile % 5 === 0)) {
        stream.write(`${label}: ${done}${total ? `/${total}` : ''}\n`)
        lastLabel = label
        lastDecile = decile
      }
    },
    log(message) {
      stream.write(`${live ? '\r\x1b[2K' : ''}${message}\n`)
    },
    done() {
      if (live) stream.write('\r\x1b[2K')
    },
  }
}
