interface Caller {
  readonly resolve: (token: string) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Reads a store's change token once for many callers. One read answers every caller that asked before
 * it started: the first caller of an event-loop turn waits for the end of that turn, so the requests read
 * in the same turn join it, and callers that ask while a read runs wait for the next one. Every caller
 * thus gets a token read after it asked, which is all the caches need (see Store.changeToken); under load
 * that is one read per batch of requests, and their responses leave together.
 */
export class SharedTokenRead {
  readonly #read: () => Promise<string> | string;
  #waiting: Caller[] = [];
  #reading = false;

  constructor(read: () => Promise<string> | string) {
    this.#read = read;
  }

  read(): Promise<string> {
    return new Promise((resolve, reject) => {
      this.#waiting.push({ resolve, reject });
      if (!this.#reading) {
        this.#reading = true;
        setImmediate(() => void this.#readAll());
      }
    });
  }

  async #readAll(): Promise<void> {
    while (this.#waiting.length > 0) {
      const callers = this.#waiting;
      this.#waiting = [];
      try {
        const token = await this.#read();
        for (const caller of callers) caller.resolve(token);
      } catch (error) {
        for (const caller of callers) caller.reject(error);
      }
    }
    this.#reading = false;
  }
}
