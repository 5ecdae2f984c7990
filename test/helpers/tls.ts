import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { tempDir } from './temp-dir.js';

/** A self-signed certificate for 127.0.0.1, made for this test (its files are removed after it). */
export function certificate(t: TestContext): { cert: Buffer; key: Buffer; certPath: string; keyPath: string } {
  const dir = tempDir(t, 'petstore-tls-');
  const certPath = join(dir, 'cert.pem');
  const keyPath = join(dir, 'key.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-keyout',
      keyPath,
      '-out',
      certPath,
    ],
    { stdio: 'ignore' },
  );
  return { cert: readFileSync(certPath), key: readFileSync(keyPath), certPath, keyPath };
}
