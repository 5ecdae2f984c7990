import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isUnavailable } from '../../src/store/postgres/postgres-errors.js';

const sqlError = (code: string, message = 'x') => Object.assign(new Error(message), { code });

test('outages are recognised: network errors, connection classes, shutdown, time-outs, read-only fail-over, lock waits', () => {
  for (const error of [
    sqlError('ECONNREFUSED'),
    sqlError('ENETUNREACH'),
    sqlError('08006'),
    sqlError('08001'),
    sqlError('53300'),
    sqlError('57P01'),
    sqlError('57P03'),
    sqlError('57014'),
    sqlError('25006'),
    sqlError('55P03'),
    sqlError('25P03'),
    new Error('timeout exceeded when trying to connect'),
    new Error('Connection terminated unexpectedly'),
    new Error('Connection terminated due to connection timeout'),
    new Error('Query read timeout'),
  ]) {
    assert.equal(isUnavailable(error), true, `${(error as { code?: string }).code ?? ''} ${error.message}`);
  }
});

test('bugs are not outages: a protocol violation, bad input, or a SQL error whose text says "timeout"', () => {
  for (const error of [
    sqlError('08P01'),
    sqlError('22P02', 'invalid input syntax for type integer: "timeout"'),
    sqlError('23505'),
    sqlError('42P01', 'relation "connection terminated" does not exist'),
    new Error('something else'),
    undefined,
  ]) {
    assert.equal(isUnavailable(error), false, String(error));
  }
});
