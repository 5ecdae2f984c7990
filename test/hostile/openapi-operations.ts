import assert from 'node:assert/strict';
import type { Scope } from '../../src/domain/api-key.js';

/** The operations of the service's OpenAPI document, which the generators derive requests from. */

export type Schema = Record<string, any>;

export interface Parameter {
  readonly name: string;
  readonly schema: Schema;
}

export interface Operation {
  readonly id: string;
  readonly method: string;
  /** `/v1/pets/{petId}` */
  readonly template: string;
  readonly pathParameters: readonly Parameter[];
  readonly queryParameters: readonly Parameter[];
  /** Request headers the document describes (`Idempotency-Key` on the POSTs). */
  readonly headerParameters: readonly Parameter[];
  readonly body?: Schema;
  readonly scopes: Scope;
}

export function resolve(doc: Schema, schema: Schema): Schema {
  if (typeof schema.$ref === 'string') {
    const name = /^#\/components\/schemas\/(.+)$/.exec(schema.$ref)?.[1];
    const target = name === undefined ? undefined : doc.components?.schemas?.[name];
    assert.ok(target !== undefined, `unresolvable $ref ${schema.$ref}`);
    return resolve(doc, target);
  }
  if (Array.isArray(schema.allOf) && schema.allOf.length === 1) {
    const { allOf, ...rest } = schema;
    return { ...resolve(doc, allOf[0]), ...rest };
  }
  return schema;
}

/** The operations of the OpenAPI document, with their parameters and body schema resolved. */
export function operationsOf(doc: Schema): Operation[] {
  const base = new URL(doc.servers?.[0]?.url ?? '/', 'http://x').pathname.replace(/\/$/, '');
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries<Schema>(doc.paths ?? {})) {
    for (const method of ['get', 'put', 'post', 'patch', 'delete']) {
      const operation = item[method];
      if (operation === undefined) continue;
      const parameters: Schema[] = [...(item.parameters ?? []), ...(operation.parameters ?? [])];
      const of = (where: string) =>
        parameters.filter((p) => p.in === where).map((p) => ({ name: p.name, schema: resolve(doc, p.schema ?? {}) }));
      const bodySchema = operation.requestBody?.content?.['application/json']?.schema;
      operations.push({
        id: operation.operationId ?? `${method} ${path}`,
        method: method.toUpperCase(),
        template: base + path,
        pathParameters: of('path'),
        queryParameters: of('query'),
        headerParameters: of('header'),
        ...(bodySchema === undefined ? {} : { body: resolve(doc, bodySchema) }),
        // The scope an operation states (bearer scopes), else the rule: reads need `read`, writes `write`.
        scopes: operation.security?.[0]?.bearerAuth?.[0] ?? (method === 'get' ? 'read' : 'write'),
      });
    }
  }
  return operations;
}
