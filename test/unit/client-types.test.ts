import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  type DeliveryOrdering,
  type ErrorBody,
  type NewOrder,
  type NewPet,
  type Order,
  type OrderStatus,
  type Page,
  type Pet,
  type PetStatus,
  PetstoreClient,
  PetstoreError,
  type WebhookTestEvent,
} from 'petstore/client';
import ts from 'typescript';

/**
 * Never run: `npm run typecheck` (tsc) checks it against the package's own export, the built .d.ts files
 * (`npm run build` first). Each `@ts-expect-error` line must be a type error, or tsc fails.
 */
export async function typeChecks(client: PetstoreClient): Promise<void> {
  const newPet: NewPet = { name: 'Rex', categoryId: 1, status: 'pending' };
  const pet: Pet = await client.createPet(newPet, { idempotencyKey: 'create-rex-1' });
  const id: number = pet.id;
  const status: PetStatus = pet.status;
  const page: Page<Pet> = await client.listPets({ limit: 10, status: 'sold' });
  await client.listPets({ cursor: page.nextCursor, status: 'sold' });
  for await (const each of client.pets({ status: 'available', limit: 100 })) {
    const name: string = each.name;
    void name;
  }
  const newOrder: NewOrder = { petId: id };
  const order: Order = await client.placeOrder(newOrder);
  const moved: OrderStatus = (await client.changeOrderStatus(order.id, { status: 'approved' })).status;
  const orders: Page<Order> = await client.listOrders({ status: 'placed' });
  for await (const each of client.orders({ status: moved })) void each.complete;
  for await (const event of client.events({ type: 'order.placed' })) {
    const about: string = event.subject;
    void about;
  }
  const sent: WebhookTestEvent = { id: 'evt_1', type: 'webhook.test', timestamp: '', data: { webhookId: 1 } };
  // @ts-expect-error a test send is about nothing
  void sent.subject;
  void (await client.getPet(id)).status;
  void (await client.getOrder(order.id)).createdAt;
  const event = await client.getEvent('evt_12');
  if (event.type === 'order.placed') void event.data.petId;
  void orders;
  void status;
  const endpoint = await client.createWebhookEndpoint({ url: 'https://hooks.example.com/in', ordering: 'none' });
  const ordering: DeliveryOrdering = (await client.changeWebhookEndpoint(endpoint.id, { ordering: 'subject' }))
    .ordering;
  void ordering;
  const rateLimit: number | null = (await client.changeWebhookEndpoint(endpoint.id, { rateLimit: null })).rateLimit;
  void rateLimit;

  try {
    await client.getPet(id, { signal: AbortSignal.timeout(1000) });
  } catch (error) {
    if (error instanceof PetstoreError) {
      const body: ErrorBody = { code: 'not_found', message: error.message, status: error.status };
      const code: string = error.code;
      const retryAfter: number | undefined = error.retryAfter;
      void [body, code, retryAfter];
    }
  }

  // @ts-expect-error name is a string
  await client.createPet({ name: 1, categoryId: 1 });
  // @ts-expect-error status is one of available, pending, sold
  await client.createPet({ name: 'Rex', categoryId: 1, status: 'lost' });
  // @ts-expect-error categoryId is required
  await client.createPet({ name: 'Rex' });
  // @ts-expect-error the service assigns the id
  await client.createPet({ id: 1, name: 'Rex', categoryId: 1 });
  // @ts-expect-error ids are numbers
  await client.getPet('1');
  // @ts-expect-error ids are numbers
  await client.getOrder('1');
  // @ts-expect-error event ids are strings (evt_12)
  await client.getEvent(12);
  // @ts-expect-error an order status, not a pet status
  await client.changeOrderStatus(1, { status: 'sold' });
  // @ts-expect-error a pet status, not an order status
  await client.listPets({ status: 'placed' });
  // @ts-expect-error unknown query parameter
  await client.listPets({ stauts: 'sold' });
  // @ts-expect-error the iterator walks the pages itself
  client.pets({ cursor: 'abc' });
  // @ts-expect-error a page of pets is not a page of orders
  const wrong: Page<Order> = await client.listPets();
  // @ts-expect-error an ordering is subject or none
  await client.createWebhookEndpoint({ url: 'https://hooks.example.com/in', ordering: 'fifo' });
  // @ts-expect-error an ordering is subject or none
  await client.changeWebhookEndpoint(1, { ordering: 'parallel' });
  // @ts-expect-error a rate limit is a number (or null)
  await client.createWebhookEndpoint({ url: 'https://hooks.example.com/in', rateLimit: '5' });
  // @ts-expect-error an apiKey is required
  new PetstoreClient({ baseUrl: 'http://127.0.0.1:8080' });
  void wrong;
}

test('petstore/client resolves, through the package exports map, to the built client', () => {
  const resolved = fileURLToPath(import.meta.resolve('petstore/client'));
  assert.equal(resolved, fileURLToPath(new URL('../../dist/client/index.js', import.meta.url)));
  assert.equal(typeof PetstoreClient, 'function');
});

test('getPet is @deprecated in the published types, naming the removal date and the replacement', () => {
  const path = fileURLToPath(new URL('../../dist/client/petstore-client.d.ts', import.meta.url));
  const source = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
  let deprecated: string | undefined;
  const visit = (node: ts.Node): void => {
    if (ts.isMethodDeclaration(node) && node.name.getText(source) === 'getPet') {
      const tag = ts.getJSDocDeprecatedTag(node);
      deprecated = tag === undefined ? '' : ts.getTextOfJSDocComment(tag.comment);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  assert.ok(deprecated, 'getPet has a @deprecated tag');
  assert.match(deprecated, /5 December 2030/);
  assert.match(deprecated, /listPets/);
  assert.match(deprecated, /status/);
});
