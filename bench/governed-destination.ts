/**
 * The `governed` bench system's destination: what a careful team configures, priced at
 * ingest. Consent fails closed; ten filters in Segment's Public API shape cover every action and
 * most of FQL, and none of them stops a bench message (an Order Completed track of a known user
 * with consent granted), so every message still arrives and the runs compare like for like. The
 * first one matches every message and drops properties, so the per-destination body is made each time.
 */
export const GOVERNED_CONSENT = { categories: ['analytics', 'advertising'], whenAbsent: 'drop' as const };

export const GOVERNED_FILTERS = [
  { title: 'No emails or IPs', enabled: true, if: 'all', actions: [{ type: 'DROP_PROPERTIES', fields: { properties: ['email'], context: ['ip'] } }] },
  { title: 'No internal tests', enabled: true, if: "event = 'Internal Test'", actions: [{ type: 'DROP' }] },
  { title: 'No debug events', enabled: true, if: "match(event, 'Debug*')", actions: [{ type: 'DROP' }] },
  { title: 'Only identified users', enabled: true, if: 'userId = null', actions: [{ type: 'DROP' }] },
  { title: 'A tenth of page views', enabled: true, if: "type = 'page'", actions: [{ type: 'SAMPLE', percent: 0.1 }] },
  { title: 'Sign-ups: plan only', enabled: true, if: "event = 'Signed Up'", actions: [{ type: 'ALLOW_PROPERTIES', fields: { properties: ['plan'] } }] },
  { title: 'No refunds below zero', enabled: true, if: 'properties.total < 0', actions: [{ type: 'DROP' }] },
  { title: 'No test harness', enabled: true, if: "contains(context.library.name, 'test-harness')", actions: [{ type: 'DROP' }] },
  { title: 'No passwords', enabled: true, if: "type = 'identify' and !(traits.password = null)", actions: [{ type: 'DROP_PROPERTIES', fields: { traits: ['password'] } }] },
  { title: 'No runaway names', enabled: true, if: 'length(event) > 200 or typeof(properties.total) = "string"', actions: [{ type: 'DROP' }] },
];
