import type { Store } from './store.js';

/** Receives the duration of one store call, by its name (`pets.list`) and whether it succeeded. */
export type ObserveCall = (call: string, seconds: number, ok: boolean) => void;

function timed<A extends unknown[], R>(call: string, run: (...args: A) => Promise<R>, observe: ObserveCall) {
  return async (...args: A): Promise<R> => {
    const start = process.hrtime.bigint();
    let ok = false;
    try {
      const result = await run(...args);
      ok = true;
      return result;
    } finally {
      observe(call, Number(process.hrtime.bigint() - start) / 1e9, ok);
    }
  };
}

/**
 * The store with every call timed: what /metrics reports as store latency. Listed call by call, so a
 * method added to the Store interface does not compile until it is timed here too.
 */
export function timedStore(store: Store, observe: ObserveCall): Store {
  const { pets, orders, apiKeys, events, webhooks, deliveries, redeliveries } = store;
  return {
    kind: store.kind,
    pets: {
      create: timed('pets.create', (pet) => pets.create(pet), observe),
      createOnce: timed('pets.createOnce', (pet, once) => pets.createOnce(pet, once), observe),
      get: timed('pets.get', (id) => pets.get(id), observe),
      list: timed('pets.list', (query) => pets.list(query), observe),
      update: timed('pets.update', (id, patch, expected) => pets.update(id, patch, expected), observe),
      remove: timed('pets.remove', (id, expected) => pets.remove(id, expected), observe),
    },
    orders: {
      place: timed('orders.place', (order) => orders.place(order), observe),
      placeOnce: timed('orders.placeOnce', (order, once) => orders.placeOnce(order, once), observe),
      get: timed('orders.get', (id) => orders.get(id), observe),
      list: timed('orders.list', (query) => orders.list(query), observe),
      changeStatus: timed('orders.changeStatus', (id, to) => orders.changeStatus(id, to), observe),
    },
    apiKeys: {
      create: timed('apiKeys.create', (key) => apiKeys.create(key), observe),
      findById: timed('apiKeys.findById', (id) => apiKeys.findById(id), observe),
      redeemLink: timed('apiKeys.redeemLink', (id, expiresAt) => apiKeys.redeemLink(id, expiresAt), observe),
      createFirst: timed('apiKeys.createFirst', (key) => apiKeys.createFirst(key), observe),
      findByHash: timed('apiKeys.findByHash', (hash) => apiKeys.findByHash(hash), observe),
      list: timed('apiKeys.list', () => apiKeys.list(), observe),
      revoke: timed('apiKeys.revoke', (idOrName, at) => apiKeys.revoke(idOrName, at), observe),
      touch: timed('apiKeys.touch', (id, at) => apiKeys.touch(id, at), observe),
    },
    events: {
      list: timed('events.list', (query) => events.list(query), observe),
      head: timed('events.head', () => events.head(), observe),
      purge: timed('events.purge', (before, now) => events.purge(before, now), observe),
      // Not timed: it starts a watch; its looks at the head are what the streams' wake-ups cost.
      watch: (onChange) => events.watch(onChange),
    },
    webhooks: {
      create: timed('webhooks.create', (endpoint, perOwner) => webhooks.create(endpoint, perOwner), observe),
      get: timed('webhooks.get', (id) => webhooks.get(id), observe),
      list: timed('webhooks.list', (query) => webhooks.list(query), observe),
      update: timed('webhooks.update', (id, change) => webhooks.update(id, change), observe),
      rotateSecret: timed('webhooks.rotateSecret', (id, rotation) => webhooks.rotateSecret(id, rotation), observe),
      remove: timed('webhooks.remove', (id) => webhooks.remove(id), observe),
      attempts: timed('webhooks.attempts', (endpointId, query) => webhooks.attempts(endpointId, query), observe),
    },
    deliveries: {
      claim: timed('deliveries.claim', (query) => deliveries.claim(query), observe),
      // Not timed: it answers from memory.
      unreached: () => deliveries.unreached(),
      finish: timed('deliveries.finish', (outcome) => deliveries.finish(outcome), observe),
      signingSecrets: timed('deliveries.signingSecrets', (ids) => deliveries.signingSecrets(ids), observe),
      stats: timed('deliveries.stats', (now) => deliveries.stats(now), observe),
    },
    redeliveries: {
      resend: timed('redeliveries.resend', (query) => redeliveries.resend(query), observe),
      recover: timed('redeliveries.recover', (query) => redeliveries.recover(query), observe),
      sendTest: timed('redeliveries.sendTest', (query) => redeliveries.sendTest(query), observe),
    },
    purgeExpiredIdempotencyKeys: timed('idempotency.purge', (now) => store.purgeExpiredIdempotencyKeys(now), observe),
    secret: (name) => store.secret(name),
    ping: timed('ping', () => store.ping(), observe),
    // Not timed: read for every request (once per batch of them), where a histogram update costs 1.6 % of CPU.
    changeToken: () => store.changeToken(),
    poolStats: () => store.poolStats(),
    close: () => store.close(),
  };
}
