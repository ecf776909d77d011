/**
 * One /metrics scrape for the whole cluster: the worker that receives it
 * asks the primary, the primary gathers every worker's numbers with
 * prom-client's AggregatorRegistry (counters and histograms summed, gauges
 * as each declares) and answers with the text. The primary serves no HTTP,
 * so the scrape goes through whichever worker the connection reached.
 */
import client from 'prom-client'

interface MetricsAsk {
  type: 'jobsnap:metrics'
  ask: number
}

interface MetricsAnswer {
  type: 'jobsnap:metrics'
  answer: number
  text?: string
  error?: string
}

function isMessage<T extends object>(message: unknown, key: keyof T): message is T {
  return (
    typeof message === 'object' &&
    message !== null &&
    (message as { type?: unknown }).type === 'jobsnap:metrics' &&
    key in message
  )
}

/** Longer than prom-client's own 5 s wait for a worker that does not answer. */
const ASK_TIMEOUT_MS = 6_000

/** The worker's side: the cluster's metrics text, from the primary. */
export function clusterMetricsAsker(channel: {
  send(message: MetricsAsk): unknown
  on(event: 'message', listener: (message: unknown) => void): unknown
}): () => Promise<string> {
  let asks = 0
  const waiting = new Map<number, (answer: MetricsAnswer) => void>()
  channel.on('message', (message) => {
    if (isMessage<MetricsAnswer>(message, 'answer')) waiting.get(message.answer)?.(message)
  })
  return () =>
    new Promise((resolve, reject) => {
      const ask = ++asks
      const timer = setTimeout(() => {
        waiting.delete(ask)
        reject(new Error(`the cluster's primary did not answer a metrics scrape within ${ASK_TIMEOUT_MS} ms`))
      }, ASK_TIMEOUT_MS)
      waiting.set(ask, (answer) => {
        clearTimeout(timer)
        waiting.delete(ask)
        if (answer.text !== undefined) resolve(answer.text)
        else reject(new Error(answer.error ?? 'the primary could not gather metrics'))
      })
      channel.send({ type: 'jobsnap:metrics', ask })
    })
}

/** The primary's side: answers a worker's ask with every worker's metrics, aggregated. */
export function metricsAnswerer(): (message: unknown, reply: (answer: MetricsAnswer) => void) => boolean {
  const aggregator = new client.AggregatorRegistry()
  return (message, reply) => {
    if (!isMessage<MetricsAsk>(message, 'ask')) return false
    aggregator.clusterMetrics().then(
      (text) => reply({ type: 'jobsnap:metrics', answer: message.ask, text }),
      (error: Error) => reply({ type: 'jobsnap:metrics', answer: message.ask, error: error.message }),
    )
    return true
  }
}
