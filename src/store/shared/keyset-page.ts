import type { PageQuery } from '../records.js';
import type { Param } from './sql-params.js';

/** A table's read statements: one row by id, a page, and a page of one status. */
export interface ReadQueries {
  readonly get: string;
  readonly page: string;
  readonly pageByStatus: string;
}

/**
 * Two page statements rather than one with `(? IS NULL OR status = ?)`, so each is served by its index
 * and reads only the rows it returns. `param(n)` writes the n-th parameter in the backend's syntax.
 */
export function readQueries(table: string, columns: string, param: Param): ReadQueries {
  const select = `SELECT ${columns} FROM ${table} WHERE`;
  return {
    get: `${select} id = ${param(1)}`,
    page: `${select} id > ${param(1)} ORDER BY id LIMIT ${param(2)}`,
    pageByStatus: `${select} status = ${param(1)} AND id > ${param(2)} ORDER BY id LIMIT ${param(3)}`,
  };
}

export interface PageStatement {
  readonly which: 'page' | 'pageByStatus';
  readonly params: (string | number)[];
}

/** Which page statement serves a query, with its parameters. */
export function pageStatement(query: PageQuery<string>): PageStatement {
  const afterId = query.afterId ?? 0;
  return query.status === undefined
    ? { which: 'page', params: [afterId, query.limit] }
    : { which: 'pageByStatus', params: [query.status, afterId, query.limit] };
}
