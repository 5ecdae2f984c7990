export class DuplicateNameError extends Error {
  constructor(name: string) {
    super(`an active key named "${name}" already exists`);
    this.name = 'DuplicateNameError';
  }
}

/** The database cannot be reached or did not answer in time; the request may be retried later. */
export class StoreUnavailableError extends Error {
  #unreported: boolean;

  /**
   * `first` is false when a store knows this failure continues an episode it already reported (SQLite: writes
   * failing since the last commit), so a long one is logged once, not once per request.
   */
  constructor(cause: unknown, first = true, message = 'the database is unavailable') {
    super(message, { cause });
    this.name = 'StoreUnavailableError';
    this.#unreported = first;
  }

  /** True once for the first error of an episode (one error may reach several requests): log that one. */
  shouldReport(): boolean {
    const report = this.#unreported;
    this.#unreported = false;
    return report;
  }
}

/** The database cannot write because its disk is full; reads still work. */
export class StoreFullError extends StoreUnavailableError {
  constructor(cause: unknown, first: boolean) {
    super(cause, first, 'the database cannot write: its disk is full');
    this.name = 'StoreFullError';
  }
}
