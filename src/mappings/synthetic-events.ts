import type { EventType } from '../rules/trigger-types';

/**
 * One made-up message of each type, with every field Segment's spec gives that type, so a
 * mapping can be rendered once per type its trigger can match before it is saved. Values are
 * plain and well-formed: a directive that fails on them fails on every message of that type.
 */
export function syntheticEvent(type: EventType): Record<string, unknown> {
  const common = {
    type,
    messageId: 'synthetic-message',
    userId: 'synthetic-user',
    anonymousId: 'synthetic-anonymous',
    timestamp: '2026-11-28T10:00:00.000Z',
    receivedAt: '2026-11-28T10:00:00.000Z',
    context: { ip: '203.0.113.1', locale: 'en-US', library: { name: 'analytics.js', version: '1.0.0' }, page: { path: '/', url: 'https://example.com/' } },
    integrations: {},
  };
  switch (type) {
    case 'track':
      return { ...common, event: 'Synthetic Event', properties: { value: 1 } };
    case 'identify':
      return { ...common, traits: { email: 'synthetic@example.com', name: 'Synthetic' } };
    case 'page':
    case 'screen':
      return { ...common, name: 'Synthetic', properties: { path: '/', title: 'Synthetic' } };
    case 'group':
      return { ...common, groupId: 'synthetic-group', traits: { name: 'Synthetic' } };
    case 'alias':
      return { ...common, previousId: 'synthetic-previous' };
  }
}
