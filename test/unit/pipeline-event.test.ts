import { messageBody } from '../../src/delivery/payload';
import { pipelineEvent } from '../../src/delivery/pipeline-event';
import type { CallType } from '../../src/delivery/types';
import { acceptCall } from '../../src/messages/accept-calls';

/** A call as a sender sends it, accepted at `receivedAt` (with the request's `batchSentAt`), then rendered both ways. */
function rendered(fields: Record<string, unknown>, receivedAt: string, batchSentAt?: string) {
  const { type, ...rest } = fields;
  const message = acceptCall({ type: type as CallType, fields: rest }, Date.parse(receivedAt), batchSentAt, () => 'generated-id');
  return { pipeline: pipelineEvent(message), classic: messageBody(message) };
}

// Segment's Track spec, "Example": what analytics.js sends (its client time as `timestamp`) and
// what Segment's pipeline then holds, receivedAt stamped and timestamp corrected for the skew.
const sentByAnalyticsJs = {
  anonymousId: '23adfd82-aa0f-45a7-a756-24f2a7a4c895',
  context: {
    library: { name: 'analytics.js', version: '2.11.1' },
    page: { path: '/academy/', referrer: '', search: '', title: 'Analytics Academy', url: 'https://segment.com/academy/' },
    userAgent: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_10_5) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/46.0.2490.86 Safari/537.36',
    ip: '108.0.78.21',
  },
  event: 'Course Clicked',
  integrations: {},
  messageId: 'ajs-f8ca1e4de5024d9430b3928bd8ac6b96',
  properties: { title: 'Intro to Analytics' },
  sentAt: '2015-12-12T19:11:01.169Z',
  timestamp: '2015-12-12T19:11:01.152Z',
  type: 'track',
  userId: 'AiUGstSDIg',
};
const segmentTrackExample = {
  anonymousId: '23adfd82-aa0f-45a7-a756-24f2a7a4c895',
  context: sentByAnalyticsJs.context,
  event: 'Course Clicked',
  integrations: {},
  messageId: 'ajs-f8ca1e4de5024d9430b3928bd8ac6b96',
  properties: { title: 'Intro to Analytics' },
  receivedAt: '2015-12-12T19:11:01.266Z',
  sentAt: '2015-12-12T19:11:01.169Z',
  timestamp: '2015-12-12T19:11:01.249Z',
  type: 'track',
  userId: 'AiUGstSDIg',
  originalTimestamp: '2015-12-12T19:11:01.152Z',
};

it.each([
  ["Segment's Track spec example", sentByAnalyticsJs, '2015-12-12T19:11:01.266Z', undefined, segmentTrackExample],
  [
    "Segment's Common fields example (a `version` the sender sent is kept; no client timestamp: timestamp is receivedAt)",
    {
      anonymousId: '507f191e810c19729de860ea',
      context: { ip: '8.8.8.8' },
      integrations: { All: true, Mixpanel: false, Salesforce: false },
      messageId: '022bb90c-bbac-11e4-8dfc-aa07a5b093db',
      type: 'track',
      event: 'E',
      properties: {},
      userId: '97980cfea0067',
      version: '1.1',
    },
    '2015-02-23T22:28:55.387Z',
    undefined,
    {
      anonymousId: '507f191e810c19729de860ea',
      context: { ip: '8.8.8.8' },
      integrations: { All: true, Mixpanel: false, Salesforce: false },
      messageId: '022bb90c-bbac-11e4-8dfc-aa07a5b093db',
      receivedAt: '2015-02-23T22:28:55.387Z',
      timestamp: '2015-02-23T22:28:55.387Z',
      type: 'track',
      event: 'E',
      properties: {},
      userId: '97980cfea0067',
      version: '1.1',
    },
  ],
  [
    'a server library call in a batch: channel, _metadata and unknown root fields kept, the batch sentAt, writeKey left out',
    {
      type: 'identify',
      userId: 'u1',
      traits: { plan: 'pro' },
      channel: 'server',
      _metadata: { nodeVersion: '20.18.1', jsRuntime: 'node' },
      shopRegion: 'eu',
      writeKey: 'never-sent-on',
      timestamp: '2026-01-01T00:00:00.000Z',
    },
    '2026-01-01T00:00:10.500Z',
    '2026-01-01T00:00:10.000Z',
    {
      type: 'identify',
      messageId: 'generated-id',
      userId: 'u1',
      traits: { plan: 'pro' },
      context: {},
      channel: 'server',
      _metadata: { nodeVersion: '20.18.1', jsRuntime: 'node' },
      shopRegion: 'eu',
      sentAt: '2026-01-01T00:00:10.000Z',
      originalTimestamp: '2026-01-01T00:00:00.000Z',
      timestamp: '2026-01-01T00:00:00.500Z',
      receivedAt: '2026-01-01T00:00:10.500Z',
    },
  ],
  [
    'an alias: numeric ids as strings, no seed-only fields',
    { type: 'alias', userId: 42, previousId: 'anon-1', messageId: 'a-1' },
    '2026-01-01T00:00:00.000Z',
    undefined,
    { type: 'alias', messageId: 'a-1', userId: '42', previousId: 'anon-1', context: {}, timestamp: '2026-01-01T00:00:00.000Z', receivedAt: '2026-01-01T00:00:00.000Z' },
  ],
])('renders {"@path": "$."} as Segment does: %s', (_, sent, receivedAt, batchSentAt, expected) => {
  expect(rendered(sent, receivedAt, batchSentAt).pipeline).toEqual(expected);
});

it("keeps the classic webhook body in the seed's shape: version 1, the common fields, the type's own, nothing else", () => {
  expect(rendered(sentByAnalyticsJs, '2015-12-12T19:11:01.266Z').classic).toEqual({
    version: 1,
    type: 'track',
    messageId: 'ajs-f8ca1e4de5024d9430b3928bd8ac6b96',
    userId: 'AiUGstSDIg',
    anonymousId: '23adfd82-aa0f-45a7-a756-24f2a7a4c895',
    timestamp: '2015-12-12T19:11:01.249Z',
    receivedAt: '2015-12-12T19:11:01.266Z',
    context: sentByAnalyticsJs.context,
    event: 'Course Clicked',
    properties: { title: 'Intro to Analytics' },
  });
});
