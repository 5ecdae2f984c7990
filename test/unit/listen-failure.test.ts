import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError } from '../../src/config/config-error.js';
import { listenFailure } from '../../src/process/listen-failure.js';

const failed = (code: string, message: string) => Object.assign(new Error(message), { code });

test('a listen failure names the setting that gets the server out of it', () => {
  const cases: Array<[string, string, RegExp]> = [
    ['EADDRINUSE', 'listen EADDRINUSE: address already in use 127.0.0.1:8080', /in use 127\.0\.0\.1:8080: .*set PORT/],
    ['EADDRNOTAVAIL', 'listen EADDRNOTAVAIL: address not available 192.0.2.1:8080', /192\.0\.2\.1:8080: .*set HOST/],
    ['EACCES', 'listen EACCES: permission denied 0.0.0.0:80', /0\.0\.0\.0:80: .*set PORT to 1024 or above/],
  ];
  for (const [code, message, expected] of cases) {
    const error = listenFailure(failed(code, message));
    assert.ok(error instanceof ConfigError, code);
    assert.match(error.message, expected);
  }
  const other = failed('ECONNRESET', 'something else');
  assert.equal(listenFailure(other), other, 'any other failure is told as it is');
});
