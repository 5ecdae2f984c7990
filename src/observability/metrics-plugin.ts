import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import fp from 'fastify-plugin';
import { clusterScrape } from './cluster-metrics.js';
import type { Metrics } from './metrics.js';
import { operationOf } from './operation.js';

/** Counts and times every response, and serves `GET /metrics` (Prometheus text, public). */
export const metricsPlugin = fp(
  async (app: FastifyInstance, { metrics, acrossWorkers }: { metrics: Metrics; acrossWorkers: boolean }) => {
    const scrape = acrossWorkers ? clusterScrape(metrics.registry) : () => metrics.registry.metrics();
    app.addHook('onResponse', (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
      const labels = { operation: operationOf(request), status: String(reply.statusCode) };
      metrics.requests.inc(labels);
      metrics.latency.observe(labels, reply.elapsedTime / 1000);
      const schema = request.routeOptions.schema as { deprecated?: boolean } | undefined;
      if (schema?.deprecated === true) {
        metrics.deprecatedCalls.inc({ operation: labels.operation, key_id: String(request.apiKey?.id ?? 'none') });
      }
      done();
    });
    app.get('/metrics', { config: { public: true }, schema: { hide: true } }, async (_request, reply) => {
      reply.type(metrics.registry.contentType);
      return scrape();
    });
  },
  { name: 'metrics' },
);
