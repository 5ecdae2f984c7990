import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { type TestContext, test } from 'node:test';
import { answerWithin } from '../../src/rate-limit/answer-timeout.js';

const MS = 50;

/**
 * A TCP server in a process of its own (so it answers while this one stalls) that echoes every write, and a
 * connection to it whose answers resolve `ask()`.
 */
async function echo(t: TestContext): Promise<{ ask: () => Promise<string> }> {
  const server = spawn(
    process.execPath,
    [
      '-e',
      "const s = require('node:net').createServer((c) => c.pipe(c)).listen(0, '127.0.0.1', () => console.log(s.address().port))",
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  t.after(() => server.kill());
  const [port] = await once(server.stdout, 'data');
  const socket: Socket = connect(Number(String(port)), '127.0.0.1');
  await once(socket, 'connect');
  t.after(() => socket.destroy());
  return {
    ask: () => {
      const answer = once(socket, 'data').then(([data]) => String(data));
      socket.write('ping');
      return answer;
    },
  };
}

/** Asks in a setImmediate (the check phase) and then blocks the loop past MS: its timers run before its poll. */
function askThenStall<T>(ask: () => Promise<string>, timed: (answer: Promise<string>) => Promise<T>): Promise<T> {
  return new Promise((resolve) => {
    setImmediate(() => {
      resolve(timed(ask()));
      const end = performance.now() + 3 * MS;
      while (performance.now() < end);
    });
  });
}

const late = () => new Error('late');

test('an answer that came in while the event loop stalled is on time; a plain timer calls it late', async (t) => {
  const { ask } = await echo(t);
  const within = await askThenStall(ask, (answer) => answerWithin(answer, MS, late));
  assert.equal(within, 'ping');
  const plain = (answer: Promise<string>) =>
    Promise.race([answer, new Promise<never>((_, reject) => setTimeout(() => reject(late()), MS))]);
  await assert.rejects(askThenStall(ask, plain), /late/, 'the control: a plain timer fires before the poll');
});

test('an answer that does not come is late after the time given; a failure is passed on as it is', async () => {
  const started = performance.now();
  await assert.rejects(answerWithin(new Promise<never>(() => undefined), MS, late), /late/);
  assert.ok(performance.now() - started >= MS - 1);
  await assert.rejects(answerWithin(Promise.reject(new Error('refused')), MS, late), /refused/);
});
