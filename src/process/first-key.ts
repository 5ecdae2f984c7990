import { systemClock } from '../clock.js';
import { issueFirstApiKey } from '../services/api-keys.js';
import type { Store } from '../store/store.js';

/** On a store with no keys at all, creates one and prints it, once; does nothing otherwise. */
export async function announceFirstKey(store: Store, out: NodeJS.WritableStream): Promise<void> {
  const first = await issueFirstApiKey(store, systemClock);
  if (first === undefined) return;
  out.write(
    `\nNo API keys existed, so petstore created one. It is shown only this once; keep it safe:\n\n  ${first.key}\n\n` +
      'Use it as "Authorization: Bearer <key>". Manage keys with "petstore keys create|list|revoke".\n\n',
  );
}
