import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { retryAfterMs } from '../../src/domain/retry-after.js';

const NOW = new Date('1994-11-06T08:49:30Z');

describe('Retry-After (RFC 9110 §10.2.3)', () => {
  test('delay-seconds: a wait in seconds, from now', () => {
    assert.equal(retryAfterMs('2', NOW), 2000);
    assert.equal(retryAfterMs(' 600 ', NOW), 600_000, 'surrounding whitespace is not part of the value');
    assert.equal(retryAfterMs('0', NOW), 0);
    assert.equal(retryAfterMs('0120', NOW), 120_000);
  });

  test('an HTTP-date, in each of its three forms: the time until it', () => {
    assert.equal(retryAfterMs('Sun, 06 Nov 1994 08:49:37 GMT', NOW), 7000, 'IMF-fixdate');
    assert.equal(retryAfterMs('Sunday, 06-Nov-94 08:49:37 GMT', NOW), 7000, 'RFC 850');
    assert.equal(retryAfterMs('Sun Nov  6 08:49:37 1994', NOW), 7000, 'asctime, a day below 10 padded by a space');
    assert.equal(retryAfterMs('Mon, 07 Nov 1994 08:49:30 GMT', NOW), 86_400_000);
  });

  test('a two-digit year is the latest one not more than 50 years ahead', () => {
    const now = new Date('2026-01-01T00:00:00Z');
    assert.equal(retryAfterMs('Thursday, 01-Jan-26 00:00:05 GMT', now), 5000);
    assert.equal(retryAfterMs('Friday, 01-Jan-77 00:00:00 GMT', now), undefined, '1977, past');
    assert.equal(retryAfterMs('Monday, 01-Jan-76 00:00:00 GMT', now), Date.UTC(2076, 0, 1) - now.getTime());
  });

  test('a date that has passed, or anything else, is no wait at all', () => {
    for (const value of [
      undefined,
      '',
      '-1',
      '1.5',
      '+5',
      '1e3',
      'soon',
      'Sun, 06 Nov 1994 08:49:29 GMT',
      'Sun, 06 Nov 1994 08:49:37 UTC',
      'sun, 06 nov 1994 08:49:37 GMT',
      'Sun, 6 Nov 1994 08:49:37 GMT',
      'Sun, 31 Feb 1995 08:49:37 GMT',
      'Sun, 06 Nov 1995 24:00:00 GMT',
      '1995-11-06T08:49:37Z',
      'Sun Nov  6 08:49:37 1995 GMT',
    ]) {
      assert.equal(retryAfterMs(value, NOW), undefined, `${value}`);
    }
  });
});
