import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/store.js';

/** A fresh, empty store of one kind; `dispose` closes it and removes everything it made. */
export interface StoreFixture {
  readonly store: Store;
  /** Opens a second, independent connection to the same database (another instance). */
  reopen(): Promise<Store>;
  dispose(): Promise<void>;
}

export interface StoreBackend {
  readonly name: string;
  create(): Promise<StoreFixture>;
}

export function tempDir(prefix = 'petstore-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

const sqlite: StoreBackend = {
  name: 'sqlite',
  async create() {
    const dir = tempDir();
    const path = join(dir, 'petstore.db');
    const opened: Store[] = [SqliteStore.open(path)];
    return {
      store: opened[0] as Store,
      async reopen() {
        const store = SqliteStore.open(path);
        opened.push(store);
        return store;
      },
      async dispose() {
        for (const store of opened) await store.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
};

/** Every store the black-box and contract suites run against. */
export const BACKENDS: readonly StoreBackend[] = [sqlite];
