import { type SerializerFactory, SerializerSelector } from '@fastify/fast-json-stringify-compiler';

type Schemas = Record<string, unknown>;

/**
 * The shared schemas `schema` refers to by `$ref`, directly or through one another; all of them when a
 * reference names none of them (a nested `$id`), so nothing resolvable becomes unresolvable.
 */
function referencedSchemas(schema: unknown, shared: Schemas): Schemas {
  const used: Schemas = {};
  const pending: unknown[] = [schema];
  const seen = new Set<unknown>();
  while (pending.length > 0) {
    const node = pending.pop();
    if (node === null || typeof node !== 'object' || seen.has(node)) continue;
    seen.add(node);
    const ref = (node as { $ref?: unknown }).$ref;
    if (typeof ref === 'string' && !ref.startsWith('#')) {
      const id = ref.split('#')[0] ?? '';
      if (!(id in shared)) return shared;
      if (!(id in used)) {
        used[id] = shared[id];
        pending.push(shared[id]);
      }
    }
    pending.push(...Object.values(node));
  }
  return used;
}

/**
 * Fastify's own serializer compiler (fast-json-stringify), given only the shared schemas each response
 * schema uses: it validates and indexes every shared schema it is given, once for each of the 165
 * response schemas (route, method and status), the largest piece of start-up work. Same serializers.
 */
export function serializerFactory(): SerializerFactory {
  const build = SerializerSelector();
  return (shared, options) => {
    const all = (shared ?? {}) as Schemas;
    return (route) => build(referencedSchemas(route.schema, all), options)(route);
  };
}
