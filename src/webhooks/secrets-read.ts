import type { DeliveryStore } from '../store/store.js';
import type { SigningSecrets } from '../store/webhook-endpoint-records.js';

interface Waiting {
  readonly endpoint: number;
  readonly resolve: (secrets: SigningSecrets | undefined) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Reads endpoints' signing secrets as their attempts are about to be sent, so each is signed with the
 * secrets of that moment, not of its claim: a rotation in between (an attempt waiting for a connection)
 * would otherwise send the old signature alone. One read answers every attempt that asked in the same turn
 * of the event loop, and those that ask while it runs wait for the next: under load, a read per batch.
 */
export class SecretsRead {
  readonly #deliveries: DeliveryStore;
  #waiting: Waiting[] = [];
  #reading = false;

  constructor(deliveries: DeliveryStore) {
    this.#deliveries = deliveries;
  }

  /** The endpoint's secrets now; undefined when it is gone. */
  read(endpoint: number): Promise<SigningSecrets | undefined> {
    return new Promise((resolve, reject) => {
      this.#waiting.push({ endpoint, resolve, reject });
      if (!this.#reading) {
        this.#reading = true;
        setImmediate(() => void this.#readAll());
      }
    });
  }

  async #readAll(): Promise<void> {
    while (this.#waiting.length > 0) {
      const waiting = this.#waiting;
      this.#waiting = [];
      try {
        const secrets = await this.#deliveries.signingSecrets([...new Set(waiting.map((w) => w.endpoint))]);
        for (const w of waiting) w.resolve(secrets.get(w.endpoint));
      } catch (error) {
        for (const w of waiting) w.reject(error);
      }
    }
    this.#reading = false;
  }
}
