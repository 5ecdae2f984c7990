import type { TestContext } from 'node:test';
import { type Answer, type Receiver, startReceiver as start } from '../../dev/webhook-receiver.js';

/** A local webhook receiver (dev/webhook-receiver.ts), closed after the test. */
export async function startReceiver(t: TestContext, answer?: Answer, port?: number): Promise<Receiver> {
  const receiver = await start({ answer, port });
  t.after(() => receiver.close());
  return receiver;
}
