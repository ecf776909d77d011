/**
 * Progress for long builds. On a terminal, a live bar per step with its rate
 * and time left (cli-progress); elsewhere (logs, CI) a plain line every 10%
 * with the same figures; nothing when silenced.
 */
import cliProgress from 'cli-progress'

export interface Progress {
  /** `done` of `total` `unit`s (jobs, bytes) of the step named `label`. */
  step(label: string, done: number, total: number, unit?: string): void
  log(message: string): void
  done(): void
}

const SILENT: Progress = { step() {}, log() {}, done() {} }

function amount(value: number, unit: string): string {
  if (unit === 'bytes') return value >= 1e9 ? `${(value / 1e9).toFixed(2)} GB` : `${(value / 1e6).toFixed(1)} MB`
  return `${value.toLocaleString('en-US')} ${unit}`
}

function duration(seconds: number): string {
  if (!Number.isFinite(seconds)) return '?'
  return seconds >= 60 ? `${Math.floor(seconds / 60)} min ${Math.round(seconds % 60)} s` : `${seconds.toFixed(0)} s`
}

/** Rate and time left of a step, measured from its first report. */
class StepClock {
  private readonly started = performance.now()
  constructor(readonly label: string) {}
  figures(done: number, total: number, unit: string): { rate: string; left: string } {
    const seconds = (performance.now() - this.started) / 1000
    const perSecond = seconds > 0 ? done / seconds : 0
    return {
      rate: `${amount(Math.round(perSecond), unit)}/s`,
      left: duration(perSecond > 0 ? (total - done) / perSecond : Infinity),
    }
  }
}

export function createProgress(stream: NodeJS.WriteStream = process.stderr, silent = false): Progress {
  if (silent) return SILENT
  return stream.isTTY === true && !process.env.CI ? liveProgress(stream) : lineProgress(stream)
}

function liveProgress(stream: NodeJS.WriteStream): Progress {
  let bar: cliProgress.SingleBar | undefined
  let clock: StepClock | undefined
  const stop = () => {
    bar?.stop()
    bar = undefined
  }
  return {
    step(label, done, total, unit = 'items') {
      if (clock?.label !== label) {
        stop()
        clock = new StepClock(label)
        bar = new cliProgress.SingleBar(
          {
            stream,
            format: `${label} [{bar}] {percentage}% | {amount} | {rate} | {left} left`,
            hideCursor: true,
            clearOnComplete: false,
            fps: 10,
          },
          cliProgress.Presets.shades_classic,
        )
        bar.start(total, 0, { amount: '', rate: '', left: '' })
      }
      const { rate, left } = clock.figures(done, total, unit)
      bar!.setTotal(total)
      bar!.update(done, { amount: `${amount(done, unit)} of ${amount(total, unit)}`, rate, left })
    },
    log(message) {
      stop()
      clock = undefined
      stream.write(`${message}\n`)
    },
    done: stop,
  }
}

function lineProgress(stream: NodeJS.WriteStream): Progress {
  let clock: StepClock | undefined
  let lastDecile = -1
  return {
    step(label, done, total, unit = 'items') {
      if (clock?.label !== label) {
        clock = new StepClock(label)
        lastDecile = -1
      }
      const decile = total > 0 ? Math.floor((done / total) * 10) : 10
      if (decile === lastDecile) return
      lastDecile = decile
      const { rate, left } = clock.figures(done, total, unit)
      stream.write(
        `${label}: ${decile * 10}% (${amount(done, unit)} of ${amount(total, unit)}), ${rate}, ${left} left\n`,
      )
    },
    log(message) {
      stream.write(`${message}\n`)
    },
    done() {},
  }
}
