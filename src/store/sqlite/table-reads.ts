import type Database from 'better-sqlite3';
import type { PageQuery } from '../records.js';
import { pageStatement, type ReadQueries } from '../shared/keyset-page.js';

/**
 * An entity store's hot reads, prepared once: one record by id, and keyset pages (see keyset-page.ts).
 * The pet and order stores extend it.
 */
export abstract class SqliteTableReads<Row, Rec> {
  readonly #get: Database.Statement<[number], Row>;
  readonly #pages: Readonly<Record<'page' | 'pageByStatus', Database.Statement<unknown[], Row>>>;
  readonly #fromRow: (row: Row) => Rec;

  protected constructor(db: Database.Database, queries: ReadQueries, fromRow: (row: Row) => Rec) {
    this.#get = db.prepare(queries.get);
    this.#pages = { page: db.prepare(queries.page), pageByStatus: db.prepare(queries.pageByStatus) };
    this.#fromRow = fromRow;
  }

  /** get, synchronously: for use inside a transaction. */
  protected read(id: number): Rec | undefined {
    const row = this.#get.get(id);
    return row === undefined ? undefined : this.#fromRow(row);
  }

  async get(id: number): Promise<Rec | undefined> {
    return this.read(id);
  }

  /** Records in ascending id order. */
  async list(query: PageQuery<string>): Promise<Rec[]> {
    const { which, params } = pageStatement(query);
    return this.#pages[which].all(...params).map(this.#fromRow);
  }
}
