/**
 * The typed client of the petstore API: `import { PetstoreClient } from 'petstore/client'`, or from
 * 'petstore-client' when packed alone (`npm run pack:client`). Its types are the service's own schemas; it needs
 * nothing at run time but Node's fetch.
 */
export type { AuditEntry } from '../schemas/audit-log.js';
export type { ErrorBody } from '../schemas/error.js';
export type {
  Event,
  OrderPlacedEvent,
  OrderStatusChangedEvent,
  PetCreatedEvent,
  PetDeletedEvent,
  PetStatusChangedEvent,
  PetUpdatedEvent,
  WebhookEndpointDisabledEvent,
} from '../schemas/event.js';
export type { NewOrder, Order, OrderStatus, OrderStatusChange } from '../schemas/order.js';
export type { NewPet, Pet, PetChange, PetStatus } from '../schemas/pet.js';
export type { PortalLink, PortalLinkRequest } from '../schemas/portal-link.js';
export type {
  ChangedWebhookEndpoint,
  CreatedWebhookEndpoint,
  DeliveryOrdering,
  NewWebhookEndpoint,
  RotatedWebhookSecret,
  WebhookEndpoint,
  WebhookEndpointChange,
  WebhookSecretRotation,
  WebhookSignature,
} from '../schemas/webhook.js';
export type { DeliveryAttempt } from '../schemas/webhook-delivery.js';
export type { RecoveryAccepted, ResendAccepted, WebhookRecovery } from '../schemas/webhook-redelivery.js';
export type { TestSendAccepted, WebhookTestEvent } from '../schemas/webhook-test.js';
export type { Page } from './page.js';
export {
  type CallOptions,
  type ConditionalOptions,
  type CreateOptions,
  type EventsOptions,
  type ListAuditLogQuery,
  type ListEventsQuery,
  type ListOrdersQuery,
  type ListPetsQuery,
  type ListWebhookDeliveriesQuery,
  type ListWebhookEndpointsQuery,
  PetstoreClient,
  type PetstoreClientOptions,
  type WithEtag,
} from './petstore-client.js';
export {
  type ClientErrorCode,
  PetstoreError,
  type PetstoreErrorCode,
  type PetstoreErrorInit,
} from './petstore-error.js';
export { MAX_RETRY_AFTER_SECONDS } from './retry.js';
