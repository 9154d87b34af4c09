import cluster from 'node:cluster';
import { AggregatorRegistry, Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Database } from './db/index.ts';
import { onGitFinished } from './git/command.ts';
import { ownedMemo } from './read-cache.ts';

// The server's Prometheus metrics (`GET /-/metrics`): one registry per application. HTTP requests by route and
// status with their latency, job runs by kind and outcome, the job queue's depth by kind and state (read from the
// database when scraped), git operations by subcommand, the database pool, and the process's own (memory, CPU,
// event loop). With several workers the answer is the sum over them (prom-client's AggregatorRegistry through the
// primary); values read from the shared database are taken from one worker, not summed.

export interface Metrics {
  registry: Registry;
  httpRequest(method: string, route: string, status: number, seconds: number): void;
  jobRun(kind: string, outcome: string, seconds: number): void;
  close(): void;
}

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export function createMetrics(database: Database): Metrics {
  const registry = new Registry();
  const registers = [registry];
  collectDefaultMetrics({ register: registry, prefix: 'bellows_' });
  const requests = new Counter({ name: 'bellows_http_requests_total', help: 'HTTP requests answered, by method, route and status', labelNames: ['method', 'route', 'status'], registers });
  const latency = new Histogram({
    name: 'bellows_http_request_duration_seconds', help: 'Time to answer HTTP requests, by method, route and status',
    labelNames: ['method', 'route', 'status'], buckets: LATENCY_BUCKETS, registers,
  });
  const requestSeries = ownedMemo<string, { count: { inc(): void }; time: { observe(v: number): void } }>({ max: 10_000 });
  const runs = new Counter({ name: 'bellows_job_runs_total', help: 'Background job runs, by kind and outcome (succeeded, failed: to be retried, dead)', labelNames: ['kind', 'outcome'], registers });
  const runTime = new Histogram({ name: 'bellows_job_run_duration_seconds', help: 'Time background job runs took, by kind', labelNames: ['kind'], buckets: [0.01, 0.1, 0.5, 1, 5, 30, 120, 600, 1800], registers });
  new Gauge({
    name: 'bellows_jobs', help: 'Jobs in the queue, by kind and state (queued, running, dead, ...), as the database holds them',
    labelNames: ['kind', 'state'], registers, aggregator: 'first',
    async collect() {
      this.reset();
      const rows = await database.db.selectFrom('jobs').select(['kind', 'state', (eb) => eb.fn.countAll<number>().as('n')])
        .where('state', 'in', ['queued', 'running', 'dead']).groupBy(['kind', 'state']).execute();
      for (const r of rows) this.set({ kind: r.kind, state: r.state }, Number(r.n));
    },
  });
  const gitOps = new Counter({ name: 'bellows_git_operations_total', help: 'git processes run, by subcommand and result', labelNames: ['command', 'result'], registers });
  const gitTime = new Histogram({ name: 'bellows_git_operation_duration_seconds', help: 'Time git processes ran, by subcommand', labelNames: ['command'], buckets: LATENCY_BUCKETS, registers });
  new Gauge({
    name: 'bellows_db_pool_connections', help: 'Database connections of this process, by state (total, idle, waiting: requests waiting for one, max)',
    labelNames: ['state'], registers,
    collect() {
      const s = database.poolStats();
      for (const [state, n] of Object.entries(s)) this.set({ state }, n);
    },
  });
  const stopGit = onGitFinished((command, seconds, ok) => {
    gitOps.inc({ command, result: ok ? 'ok' : 'error' });
    gitTime.observe({ command }, seconds);
  });
  if (cluster.isWorker) {
    // Answers the primary's requests for this worker's metrics (see clusterMetrics).
    new AggregatorRegistry();
    AggregatorRegistry.setRegistries([registry]);
  }
  return {
    registry,
    httpRequest(method, route, status, seconds) {
      // The series of one method, route and status, bound once: prom-client would otherwise sort and join the
      // labels of both metrics on every answer.
      const key = `${method} ${status} ${route}`;
      let series = requestSeries.get(key);
      if (!series) {
        const labels = { method, route, status: String(status) };
        series = { count: requests.labels(labels), time: latency.labels(labels) };
        requestSeries.set(key, series);
      }
      series.count.inc();
      series.time.observe(seconds);
    },
    jobRun(kind, outcome, seconds) {
      runs.inc({ kind, outcome });
      runTime.observe({ kind }, seconds);
    },
    close() {
      stopGit();
      registry.clear();
    },
  };
}

interface MetricsMessage {
  bellows: 'metrics';
  id: number;
  text?: string;
  error?: string;
}

let asked = 0;

/**
 * The metrics text to answer a scrape with: in a worker of several, every worker's metrics aggregated by the primary
 * (this worker's alone when the primary does not answer within 5 s); otherwise this process's.
 */
export async function scrape(metrics: Metrics): Promise<string> {
  if (!cluster.isWorker || !process.send || !process.connected) return metrics.registry.metrics();
  const id = ++asked;
  const text = await new Promise<string | null>((resolve) => {
    const timer = setTimeout(() => done(null), 5000);
    function done(v: string | null) {
      clearTimeout(timer);
      process.off('message', onMessage);
      resolve(v);
    }
    function onMessage(m: MetricsMessage) {
      if (m?.bellows === 'metrics' && m.id === id) done(m.error ? null : m.text ?? null);
    }
    process.on('message', onMessage);
    process.send!({ bellows: 'metrics', id } satisfies MetricsMessage);
  });
  return text ?? metrics.registry.metrics();
}

/** The primary's side: aggregates every worker's metrics for the worker that was scraped. */
export function relayMetrics(): void {
  const aggregator = new AggregatorRegistry();
  cluster.on('message', (worker, m: MetricsMessage) => {
    if (m?.bellows !== 'metrics' || m.text !== undefined || m.error !== undefined) return;
    aggregator.clusterMetrics().then(
      (text) => worker.isConnected() && worker.send({ bellows: 'metrics', id: m.id, text } satisfies MetricsMessage),
      (err: Error) => worker.isConnected() && worker.send({ bellows: 'metrics', id: m.id, error: err.message } satisfies MetricsMessage),
    );
  });
}

export const METRICS_CONTENT_TYPE = Registry.PROMETHEUS_CONTENT_TYPE;
