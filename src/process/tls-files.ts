import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createSecureContext } from 'node:tls';
import { ConfigError } from '../config/config-error.js';
import type { TlsFiles } from '../config/values.js';

function reason(error: unknown): string {
  return (error as { code?: unknown }).code === 'ENOENT' ? 'no such file' : (error as Error).message;
}

function read(variable: string, path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (error) {
    throw new ConfigError(`${variable}: cannot read ${path}: ${reason(error)}`);
  }
}

/**
 * Reads TLS_CERT and TLS_KEY and checks them before the server is built, so a wrong file stops the start
 * naming the variable and the file (OpenSSL's own words, "PEM routines::no start line", name neither).
 */
export function loadTlsFiles(files: TlsFiles): { cert: Buffer; key: Buffer } {
  const cert = read('TLS_CERT', files.certPath);
  const key = read('TLS_KEY', files.keyPath);
  try {
    new X509Certificate(cert);
  } catch (error) {
    throw new ConfigError(`TLS_CERT: ${files.certPath} is not a PEM certificate: ${reason(error)}`);
  }
  try {
    createPrivateKey(key);
  } catch (error) {
    throw new ConfigError(`TLS_KEY: ${files.keyPath} is not an unencrypted PEM private key: ${reason(error)}`);
  }
  try {
    createSecureContext({ cert, key });
  } catch (error) {
    throw new ConfigError(
      `TLS_CERT ${files.certPath} and TLS_KEY ${files.keyPath} cannot be used together: ${reason(error)}`,
    );
  }
  return { cert, key };
}
