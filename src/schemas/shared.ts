import { AuditLogSchemas } from './audit-log.js';
import { ErrorBody } from './error.js';
import { Event, EventType, eventSchemasAbout } from './event.js';
import { NewOrder, Order, OrderStatus, OrderStatusChange } from './order.js';
import { NewPet, Pet, PetChange, PetStatus } from './pet.js';
import { PortalLink, PortalLinkRequest } from './portal-link.js';
import {
  ChangedWebhookEndpoint,
  CreatedWebhookEndpoint,
  NewWebhookEndpoint,
  RotatedWebhookSecret,
  WebhookEndpoint,
  WebhookEndpointChange,
  WebhookSecretRotation,
} from './webhook.js';
import { DeliveryAttempt, DeliveryStatus, DeliveryTrigger } from './webhook-delivery.js';
import { RecoveryAccepted, ResendAccepted, WebhookRecovery, WebhookResend } from './webhook-redelivery.js';
import { TestSendAccepted, WebhookTestEvent } from './webhook-test.js';

/** Schemas registered once: validation, serialisation and `components.schemas` of the OpenAPI document. */
export const SHARED_SCHEMAS = [
  PetStatus,
  Pet,
  NewPet,
  PetChange,
  OrderStatus,
  Order,
  NewOrder,
  OrderStatusChange,
  ErrorBody,
  EventType,
  ...eventSchemasAbout('pet'),
  ...eventSchemasAbout('order'),
  Event,
  WebhookEndpoint,
  ...eventSchemasAbout('webhook_endpoint'),
  CreatedWebhookEndpoint,
  NewWebhookEndpoint,
  WebhookEndpointChange,
  ChangedWebhookEndpoint,
  WebhookSecretRotation,
  RotatedWebhookSecret,
  DeliveryStatus,
  DeliveryTrigger,
  DeliveryAttempt,
  WebhookResend,
  ResendAccepted,
  WebhookRecovery,
  RecoveryAccepted,
  WebhookTestEvent,
  TestSendAccepted,
  PortalLinkRequest,
  PortalLink,
  ...AuditLogSchemas,
];
