import assert from 'node:assert/strict';
import { ERROR_CODES } from '../../src/schemas/error-codes.js';
import type { Harness } from '../helpers/harness.js';
import { type Counter, clip, type HostileRequest, type HostileResponse, summary } from './requests.js';

// ---------------------------------------------------------------------------------------------------------
// The invariants
// ---------------------------------------------------------------------------------------------------------

export const CODE_STATUS: Record<string, number> = ERROR_CODES;

/**
 * The successes that are not JSON bodies: `/metrics` (Prometheus text) and the `/docs` page with its
 * assets (HTML, scripts, styles). Its copy of the document, `/docs/json`, is JSON like any other.
 */
export function isNotJson(target: string): boolean {
  return /^\/metrics(\?|$)/.test(target) || (/^\/docs([/?]|$)/.test(target) && !/^\/docs\/json(\?|$)/.test(target));
}

export function problemsWithErrorBody(request: HostileRequest, response: HostileResponse): string[] {
  const status = response.status ?? 0;
  const problems: string[] = [];
  if (!response.contentType?.toLowerCase().startsWith('application/json')) {
    problems.push(`content-type ${response.contentType}`);
  }
  if (request.method === 'HEAD') return problems;
  const body = response.json;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return [...problems, 'body is not an object'];
  if (Object.keys(body).sort().join() !== 'code,message,status')
    problems.push('keys are not exactly code,message,status');
  if (body.status !== status) problems.push(`body.status ${body.status} is not the HTTP status ${status}`);
  if (typeof body.message !== 'string') problems.push('message is not a string');
  if (typeof body.code !== 'string' || CODE_STATUS[body.code] !== status) {
    problems.push(`code ${JSON.stringify(body.code)} is not the table's code for ${status}`);
  }
  return problems;
}

export function failure(request: HostileRequest, response: HostileResponse, what: string): string {
  return `${what}\n  request:  ${summary(request)}\n  response: ${response.status ?? `(${response.why ?? 'closed'})`} ${response.contentType ?? ''} ${clip(response.text, 400)}`;
}

/** Every generated request: no 5xx, an Error body on every error, the promised status when there is one. */
export function checkResponse(request: HostileRequest, response: HostileResponse): void {
  if (response.status === undefined) {
    assert.ok(!request.protocolValid, failure(request, response, 'the connection closed without an answer'));
    return;
  }
  assert.ok(response.status < 500, failure(request, response, `a ${response.status}`));
  if (request.nodeAnswers === true && response.status === 400) return;
  if (request.expect !== undefined) {
    assert.equal(response.status, request.expect, failure(request, response, `expected ${request.expect}`));
  }
  if (response.status >= 400) {
    const problems = problemsWithErrorBody(request, response);
    assert.deepEqual(problems, [], failure(request, response, `not an Error body: ${problems.join('; ')}`));
  } else if (request.method !== 'HEAD' && response.status !== 204 && !isNotJson(request.target)) {
    assert.ok(response.json !== undefined, failure(request, response, 'a success whose body is not JSON'));
  }
}

// ---------------------------------------------------------------------------------------------------------
// The store, and what a batch may change in it
// ---------------------------------------------------------------------------------------------------------

export interface Snapshot {
  readonly pets: readonly any[];
  readonly orders: readonly any[];
}

export async function listAll(h: Harness, first: string, counter: Counter): Promise<any[]> {
  const items: any[] = [];
  let path: string | undefined = first;
  while (path !== undefined) {
    counter.total++;
    const page = await h.call('GET', path);
    assert.equal(page.status, 200, `${path}: ${page.text}`);
    items.push(...page.json);
    path = /<([^>]+)>; rel="next"/.exec(page.headers.get('link') ?? '')?.[1];
  }
  return items;
}

export async function snapshot(h: Harness, counter: Counter): Promise<Snapshot> {
  return {
    pets: await listAll(h, '/v1/pets?limit=100', counter),
    orders: await listAll(h, '/v1/store/orders?limit=100', counter),
  };
}

export const PET_STATUS_AFTER_ORDER: Record<string, string> = {
  placed: 'pending',
  approved: 'pending',
  delivered: 'sold',
  cancelled: 'available',
};

/** The store after this request, if it is a successful POST, PATCH or deletion of a pet; unchanged otherwise. */
export function applyEffect(before: Snapshot, request: HostileRequest, response: HostileResponse): Snapshot {
  const status = response.status ?? 0;
  const path = new URL(request.target, 'http://x').pathname;
  const petId = /^\/v1\/pets\/(\d+)$/.exec(path)?.[1];
  if (request.method === 'DELETE' && status === 204 && petId !== undefined) {
    return { ...before, pets: before.pets.filter((pet) => pet.id !== Number(petId)) };
  }
  if (status < 200 || status >= 300 || (request.method !== 'POST' && request.method !== 'PATCH')) return before;
  if (response.replayed === true) return before;
  // A portal link changes no pet or order: it is a signed grant, kept nowhere until it is traded.
  if (path === '/v1/webhooks/portal-links') return before;
  const body = response.json;
  const describedResponse = failure(request, response, 'a success the store model does not know');
  assert.ok(typeof body === 'object' && body !== null, describedResponse);
  if (request.method === 'POST' && status === 201 && 'categoryId' in body) {
    return { ...before, pets: [...before.pets, body] };
  }
  if (request.method === 'PATCH' && status === 200 && 'categoryId' in body) {
    return { ...before, pets: before.pets.map((pet) => (pet.id === body.id ? body : pet)) };
  }
  const petStatus = PET_STATUS_AFTER_ORDER[body.status];
  assert.ok('petId' in body && petStatus !== undefined, describedResponse);
  const pets = before.pets.map((pet) => (pet.id === body.petId ? { ...pet, status: petStatus } : pet));
  if (request.method === 'POST' && status === 201) return { pets, orders: [...before.orders, body] };
  assert.ok(request.method === 'PATCH' && status === 200, describedResponse);
  return { pets, orders: before.orders.map((order) => (order.id === body.id ? body : order)) };
}
