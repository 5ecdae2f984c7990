import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FrameCache } from '../../src/events/frame-cache.js';
import type { EventRecord } from '../../src/store/records.js';

const event = (seq: number): EventRecord => ({
  type: 'pet.created',
  subject: `pet/${seq}`,
  pet: { id: seq, name: 'Rex', categoryId: 1, status: 'available', version: 1 },
  seq,
  position: { tx: 0, seq },
  at: new Date(0),
});

test('a frame is rendered once per event and filter, the same bytes for every stream; the oldest go first', () => {
  const frames = new FrameCache(2);
  let rendered = 0;
  const render = (record: EventRecord) => `id: ${record.seq}.${++rendered}\n\n`;
  const first = frames.frame(event(1), '', render);
  assert.equal(frames.frame(event(1), '', render), first, 'the same Buffer, not a copy');
  assert.equal(first.toString(), 'id: 1.1\n\n');
  assert.notEqual(frames.frame(event(1), 'pet.created', render), first, 'another filter: another cursor');
  frames.frame(event(2), '', render);
  assert.equal(rendered, 3);
  assert.equal(frames.frame(event(1), '', render).toString(), 'id: 1.4\n\n', 'past the bound, rendered anew');
});
