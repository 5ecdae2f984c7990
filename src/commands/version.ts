import { readFileSync } from 'node:fs';

/** The package's version, from the package.json beside src/ and dist/ (one level up from either). */
export function packageVersion(): string {
  const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version?: unknown;
  };
  return String(manifest.version);
}
