import http from 'node:http';
import https from 'node:https';
import { guardedLookup } from './guarded-lookup.js';
import type { TargetPolicy } from './target-policy.js';

/**
 * An idle connection is closed after this: below the keep-alive time-out of common servers (Node's is 5 s),
 * so that a server seldom closes one just as it is reused. A server's own `Keep-Alive: timeout` hint,
 * when shorter, wins (Node's agent reads it).
 */
const IDLE_CONNECTION_MS = 4000;
/** An endpoint's agent unused this long, with nothing in flight, is dropped with its connections. */
const IDLE_AGENT_MS = 60_000;

interface Entry {
  readonly origin: string;
  readonly agent: http.Agent;
  usedAt: number;
}

/**
 * Keep-alive connections per endpoint: one agent each, for the origin of its URL, with at most as many
 * connections as the endpoint has attempts in flight. Per endpoint, not per origin: endpoints that share
 * a host (a SaaS receiving for many customers) never wait for one another's connections. Every new
 * connection resolves through the guarded lookup, so the address it connects to has been checked; a
 * reused one stays connected to that address, whatever the name resolves to since.
 */
export class EndpointAgents {
  readonly #entries = new Map<number, Entry>();
  readonly #lookup: ReturnType<typeof guardedLookup>;
  readonly #connections: number;
  readonly #sweep: NodeJS.Timeout;

  constructor(policy: TargetPolicy, connections: number) {
    this.#lookup = guardedLookup(policy);
    this.#connections = connections;
    this.#sweep = setInterval(() => this.#dropIdle(Date.now()), IDLE_AGENT_MS);
    this.#sweep.unref();
  }

  /** The agent for an attempt to `url` of `endpoint`; a new one when the endpoint's origin changed. */
  for(endpoint: number, url: URL): http.Agent {
    const entry = this.#entries.get(endpoint);
    if (entry !== undefined && entry.origin === url.origin) {
      entry.usedAt = Date.now();
      return entry.agent;
    }
    entry?.agent.destroy();
    const options: http.AgentOptions = {
      keepAlive: true,
      maxSockets: this.#connections,
      maxFreeSockets: this.#connections,
      timeout: IDLE_CONNECTION_MS,
      // Agent options reach every connection it opens (net.connect's `lookup`).
      lookup: this.#lookup,
    };
    const agent = url.protocol === 'https:' ? new https.Agent(options) : new http.Agent(options);
    this.#entries.set(endpoint, { origin: url.origin, agent, usedAt: Date.now() });
    return agent;
  }

  /** Closes every connection (the dispatcher stopped). */
  destroy(): void {
    clearInterval(this.#sweep);
    for (const { agent } of this.#entries.values()) agent.destroy();
    this.#entries.clear();
  }

  #dropIdle(now: number): void {
    for (const [endpoint, { agent, usedAt }] of this.#entries) {
      const busy = Object.keys(agent.sockets).length > 0 || Object.keys(agent.requests).length > 0;
      if (busy || now - usedAt < IDLE_AGENT_MS) continue;
      agent.destroy();
      this.#entries.delete(endpoint);
    }
  }
}
