import assert from 'node:assert/strict';
import { test } from 'node:test';
import { eventsPerSecond } from './streams.js';

test('eventsPerSecond: intervals over the span; null without two events or a span; the floor', () => {
  assert.equal(eventsPerSecond(5, 100, 180), 50);
  assert.equal(eventsPerSecond(1, 100, 100), null);
  assert.equal(eventsPerSecond(3, 100, 100), null);
  assert.equal(eventsPerSecond(3, 100, 100, 1), 2000);
  assert.equal(eventsPerSecond(0, 0, 0, 1), null);
});
