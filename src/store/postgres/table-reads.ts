import type pg from 'pg';
import type { PageQuery } from '../records.js';
import { pageStatement, type ReadQueries } from '../shared/keyset-page.js';
import type { Database } from './postgres-db.js';

/**
 * An entity store's hot reads: one record by id, and keyset pages (see keyset-page.ts), each a statement
 * prepared per connection under `<table>-<query>`. The pet and order stores extend it.
 */
export abstract class PostgresTableReads<Row extends pg.QueryResultRow, Rec> {
  protected readonly db: Database;
  readonly #table: string;
  readonly #queries: ReadQueries;
  readonly #fromRow: (row: Row) => Rec;

  protected constructor(db: Database, table: string, queries: ReadQueries, fromRow: (row: Row) => Rec) {
    this.db = db;
    this.#table = table;
    this.#queries = queries;
    this.#fromRow = fromRow;
  }

  async get(id: number): Promise<Rec | undefined> {
    const [row] = await this.db.rows<Row>(`${this.#table}-get`, this.#queries.get, [id]);
    return row === undefined ? undefined : this.#fromRow(row);
  }

  /** Records in ascending id order. */
  async list(query: PageQuery<string>): Promise<Rec[]> {
    const { which, params } = pageStatement(query);
    const rows = await this.db.rows<Row>(`${this.#table}-${which}`, this.#queries[which], params);
    return rows.map(this.#fromRow);
  }
}
