import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { auditLogRoutes } from './api/audit-log.js';
import { docsRoutes } from './api/docs.js';
import { eventGetRoute } from './api/event-get.js';
import { eventRoutes } from './api/events.js';
import { metaRoutes } from './api/meta.js';
import { orderRoutes } from './api/orders.js';
import { petRoutes } from './api/pets.js';
import { portalLinkRoutes } from './api/portal-links.js';
import type { RouteOptions } from './api/route-options.js';
import { webhookDeliveryRoutes } from './api/webhook-deliveries.js';
import { webhookRedeliveryRoutes } from './api/webhook-redeliveries.js';
import { webhookTestSendRoutes } from './api/webhook-test-send.js';
import { webhookRoutes } from './api/webhooks.js';
import { storeCache } from './cache/store-cache.js';
import { type Clock, systemClock } from './clock.js';
import type { BackupSchedule } from './config/backup-schedule.js';
import {
  DEFAULT_AUDIT_RETENTION_DAYS,
  DEFAULT_ENDPOINTS_PER_OWNER,
  DEFAULT_EVENT_RETENTION_DAYS,
  DEFAULT_EVENT_STREAM_LIMITS,
  type EventStreamLimits,
} from './config/config.js';
import { DEFAULT_PORTAL_LINK_TTL_MS } from './config/portal-link-ttl.js';
import { CursorCodec } from './domain/cursor.js';
import { EventCursors } from './domain/event-cursor.js';
import { ERRORS } from './errors/catalogue.js';
import { errorHandler } from './errors/error-handler.js';
import { feedBell } from './events/feed-bell.js';
import { Idempotency } from './http/idempotency.js';
import { Links } from './http/links.js';
import { Metrics } from './observability/metrics.js';
import { metricsPlugin } from './observability/metrics-plugin.js';
import { requestId } from './observability/request-id.js';
import { storeSpans } from './observability/store-spans.js';
import type { Tracing } from './observability/tracing.js';
import { openapi } from './openapi/openapi-plugin.js';
import { auth } from './plugins/auth.js';
import { backupSchedule } from './plugins/backup-schedule.js';
import { jsonBodies } from './plugins/json-body.js';
import { methodNotAllowed, routeTable } from './plugins/method-not-allowed.js';
import { retention } from './plugins/retention.js';
import { securityHeaders } from './plugins/security-headers.js';
import { portalOrigin } from './portal/portal-origin.js';
import { portalPage } from './portal/portal-page.js';
import { portalSessionRoutes } from './portal/portal-session-routes.js';
import { PORTAL_PATH, PortalSessions } from './portal/portal-sessions.js';
import { FailOpen } from './rate-limit/fail-open.js';
import { failedAuthLimit, keyRateLimit, type RateLimitOptions } from './rate-limit/rate-limit-plugins.js';
import { validation } from './schema-compilers/validation-plugin.js';
import { DEFAULT_LIMITS, fastifyOptions, limitConnections, type ServerLimits } from './server/fastify-options.js';
import { gracefulClose } from './server/graceful-close.js';
import { lingeringClose } from './server/lingering-close.js';
import { logDrops } from './server/log-drops.js';
import type { Store } from './store/store.js';
import { type AroundCall, wrapStore } from './store/wrapped-store.js';
import { type DeliveryOptions, webhookDelivery } from './webhooks/delivery-plugin.js';
import { type Lookup, systemLookup } from './webhooks/target-policy.js';

export interface AppOptions {
  readonly store: Store;
  readonly publicUrl?: string | undefined;
  readonly clock?: Clock;
  readonly logger?: FastifyServerOptions['logger'];
  readonly limits?: ServerLimits;
  /** Rate limiting; off when absent. */
  readonly rateLimit?: RateLimitOptions | undefined;
  /** A worker of `serve --workers N`: /metrics reports every worker's counts, gathered by the primary. */
  readonly metricsAcrossWorkers?: boolean;
  /** PEM certificate and key: the app then speaks HTTPS, HTTP/2 with HTTP/1.1 fallback, and sends HSTS. */
  readonly tls?: { readonly cert: Buffer; readonly key: Buffer } | undefined;
  /** Proxies whose X-Forwarded-For names the client (TRUST_PROXY); none when absent. */
  readonly trustProxy?: readonly string[];
  /** Where webhooks may point (WEBHOOK_ALLOW_PRIVATE_URLS, default public https only) and the resolver to check it. */
  readonly webhooks?: { readonly allowPrivateUrls: boolean; readonly lookup?: Lookup };
  /** Between the live event stream's keep-alive comments; 15 s when absent (tests shorten it). */
  readonly eventStreamKeepAliveMs?: number;
  /** EVENT_STREAMS_PER_OWNER, EVENT_STREAMS, EVENT_STREAM_BUFFER_BYTES; their defaults when absent. */
  readonly eventStreams?: EventStreamLimits | undefined;
  /** EVENT_RETENTION_DAYS: how long events are kept (the purge), and the feed's 410; 30 when absent. */
  readonly eventRetentionDays?: number;
  /** AUDIT_RETENTION_DAYS: how long audit log entries are kept; 365 when absent. */
  readonly auditRetentionDays?: number;
  /** PORTAL_LINK_TTL in ms; its default when absent. */
  readonly portalLinkTtlMs?: number;
  /** WEBHOOK_ENDPOINTS_PER_OWNER; its default when absent. */
  readonly webhookEndpointsPerOwner?: number;
  /** Sends webhooks from this app, to `webhooks`' targets (start-server does); off when absent, as in most tests. */
  readonly webhookDelivery?: DeliveryOptions | undefined;
  /** OpenTelemetry (OTEL_EXPORTER_OTLP_ENDPOINT): request, store and webhook attempt spans; off when absent. */
  readonly tracing?: Tracing | undefined;
  /** Backups of the SQLite file `database` this app writes on `schedule` (BACKUP_DIR); none when absent. */
  readonly backups?: { readonly database: string; readonly schedule: BackupSchedule } | undefined;
}

/**
 * The composition root: builds the service on a store from named plugins, each registered after the ones
 * it declares as dependencies (Fastify refuses any other order). Hooks run in registration order, so the
 * order is also the order of checks: request id, shutdown, key (the failed-auth limit judges failures), scope,
 * key limit, route.
 * No I/O beyond the store; the caller decides whether to listen.
 */
export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const clock = options.clock ?? systemClock;
  const limits = options.limits ?? DEFAULT_LIMITS;
  const metrics = new Metrics(
    () => options.store.poolStats(),
    (now) => options.store.deliveries.stats(now),
  );
  const { tracing } = options;
  const timed = metrics.timeStoreCall;
  const traced = tracing === undefined ? undefined : storeSpans(tracing.tracer, options.store.kind);
  const around: AroundCall = traced === undefined ? timed : (call, run) => timed(call, traced(call, run));
  const store = wrapStore(options.store, around);
  const links = new Links(options.publicUrl);
  // Fastify types an HTTP/2 server differently; the routes use nothing that differs, so one type serves both.
  const app = Fastify(
    fastifyOptions({ limits, tls: options.tls, logger: options.logger, trustProxy: options.trustProxy ?? [] }),
  ).withTypeProvider<TypeBoxTypeProvider>() as unknown as FastifyInstance;
  limitConnections(app, limits);
  // First: it wraps the hooks and routes registered after it.
  if (tracing !== undefined) await app.register(tracing.requests);

  // Transport and cross-cutting concerns, then the checks every API request passes.
  await app.register(errorHandler);
  await app.register(requestId);
  await app.register(gracefulClose);
  await app.register(lingeringClose, { ms: limits.lingeringCloseMs, bytes: limits.lingeringCloseBytes });
  await app.register(securityHeaders, { https: options.tls !== undefined });
  await app.register(jsonBodies);
  await app.register(validation);
  await app.register(openapi, { links });
  await app.register(routeTable);
  await app.register(metricsPlugin, { metrics, acrossWorkers: options.metricsAcrossWorkers === true });
  const logStream = (options.logger as { stream?: unknown } | undefined)?.stream;
  await app.register(logDrops, { stream: logStream, metrics });
  await app.register(storeCache, { store });
  await options.rateLimit?.limiter.ready();
  const rateLimits = {
    rateLimit: options.rateLimit,
    metrics,
    failOpen: new FailOpen(app.log, metrics.rateLimitFailOpen),
  };
  await app.register(failedAuthLimit, rateLimits);
  const sessions = new PortalSessions({
    store,
    clock,
    secret: await store.secret('portal'),
    ttlMs: options.portalLinkTtlMs ?? DEFAULT_PORTAL_LINK_TTL_MS,
    secure: options.tls !== undefined || options.publicUrl?.startsWith('https:') === true,
  });
  // Before auth: a change under /portal from another origin is refused before anything looks at its cookie.
  await app.register(portalOrigin, { publicUrl: options.publicUrl });
  await app.register(auth, { store, clock, sessions });
  await app.register(keyRateLimit, rateLimits);

  // The routes, then the 405s for every path they leave a method out of.
  const secret = await store.secret('cursor');
  const routes: RouteOptions = {
    store,
    idempotency: new Idempotency(clock),
    clock,
    cursors: {
      pets: new CursorCodec(secret, 'pets'),
      orders: new CursorCodec(secret, 'orders'),
      webhooks: new CursorCodec(secret, 'webhooks'),
      webhookDeliveries: new CursorCodec(secret, 'webhook-deliveries'),
      auditLog: new CursorCodec(secret, 'audit-log'),
    },
    links,
  };
  await app.register(metaRoutes, { store });
  await app.register(docsRoutes, { links });
  await app.register(petRoutes, routes);
  await app.register(orderRoutes, routes);
  const targets = {
    allowPrivate: options.webhooks?.allowPrivateUrls ?? false,
    lookup: options.webhooks?.lookup ?? systemLookup,
  };
  const retentionDays = options.eventRetentionDays ?? DEFAULT_EVENT_RETENTION_DAYS;
  const webhookOperations = async (scope: FastifyInstance) => {
    const endpointsPerOwner = options.webhookEndpointsPerOwner ?? DEFAULT_ENDPOINTS_PER_OWNER;
    await scope.register(webhookRoutes, { ...routes, targets, endpointsPerOwner });
    await scope.register(webhookDeliveryRoutes, routes);
    await scope.register(webhookRedeliveryRoutes, { ...routes, eventRetentionDays: retentionDays });
    await scope.register(webhookTestSendRoutes, routes);
    await scope.register(auditLogRoutes, routes);
  };
  await webhookOperations(app);
  await app.register(portalLinkRoutes, { sessions, publicUrl: options.publicUrl });
  // The portal: the same operations by the same handlers under /portal/v1, where the cookie's path covers
  // them and a session stands in for a key of its owner with `webhooks` alone; anything else there is 403.
  await app.register(
    async (portal) => {
      portal.addHook('onRoute', (route) => {
        route.schema = { ...route.schema, hide: true };
      });
      await webhookOperations(portal);
      // What a log entry sent, for the page to show: the feed's visibility, for a session's `webhooks`.
      await portal.register(eventGetRoute, { store, scope: 'webhooks' });
      portal.all('/v1/*', async () => {
        throw ERRORS.portalWebhooksOnly.create();
      });
    },
    { prefix: PORTAL_PATH },
  );
  await app.register(portalSessionRoutes, { sessions });
  await app.register(portalPage);
  if (options.webhookDelivery !== undefined) {
    await app.register(webhookDelivery, {
      ...options.webhookDelivery,
      store,
      metrics,
      policy: targets,
      tracer: tracing?.tracer,
    });
  }
  await app.register(retention, {
    store,
    clock,
    metrics,
    eventRetentionDays: retentionDays,
    auditRetentionDays: options.auditRetentionDays ?? DEFAULT_AUDIT_RETENTION_DAYS,
  });
  if (options.backups !== undefined) await app.register(backupSchedule, { ...options.backups, metrics, clock });
  await app.register(feedBell, { events: store.events });
  await app.register(eventRoutes, {
    store,
    cursors: new EventCursors(new CursorCodec(secret, 'events')),
    links,
    retentionDays,
    keepAliveMs: options.eventStreamKeepAliveMs,
    streams: options.eventStreams ?? DEFAULT_EVENT_STREAM_LIMITS,
  });
  await app.register(eventGetRoute, { store, scope: 'read' });
  await app.register(methodNotAllowed);
  return app;
}
