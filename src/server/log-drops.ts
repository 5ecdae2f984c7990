import { EventEmitter } from 'node:events';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Metrics } from '../observability/metrics.js';

/** The asynchronous log destination drops lines rather than grow without bound (log-stream.ts): count them. */
export const logDrops = fp(
  async (app: FastifyInstance, { stream, metrics }: { stream: unknown; metrics: Metrics }) => {
    if (!(stream instanceof EventEmitter)) return;
    const countDrop = () => metrics.logLinesDropped.inc();
    stream.on('drop', countDrop);
    app.addHook('onClose', async () => {
      stream.off('drop', countDrop);
    });
  },
  { name: 'log-drops', dependencies: ['metrics'] },
);
