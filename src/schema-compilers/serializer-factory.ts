import { type SerializerFactory, SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import { onFirstUse } from './first-use.js';

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

type Serializer = (data: unknown) => string;

/**
 * What fast-json-stringify compiled in this process, by the text of the response schema, of the shared
 * schemas it used and of the options: the same text compiles to the same code, so a route registered twice
 * (the portal's copies of the webhook routes) or an app built again (tests, a restart in process) reuses
 * it. By text, because routes build their schema objects as they register and Fastify clones the shared
 * ones into each app.
 */
const compiled = new Map<string, Serializer>();

/**
 * Fastify's own serializer compiler (fast-json-stringify), given only the shared schemas each response
 * schema uses: it validates and indexes every shared schema it is given, once for each of the 165
 * response schemas (route, method and status), the largest piece of start-up work. Same serializers, each
 * compiled on its first use (first-use.ts).
 */
export function serializerFactory(): SerializerFactory {
  const build = SerializerSelector();
  return (shared, options) => {
    const all = (shared ?? {}) as Schemas;
    const optionsText = JSON.stringify(options ?? {});
    return (route) => {
      const serializer = onFirstUse(() => {
        const used = referencedSchemas(route.schema, all);
        const key = `${optionsText} ${JSON.stringify(route.schema)} ${JSON.stringify(used)}`;
        const serialize = compiled.get(key) ?? (build(used, options)(route) as Serializer);
        compiled.set(key, serialize);
        return serialize;
      });
      return (data: unknown) => serializer()(data);
    };
  };
}
