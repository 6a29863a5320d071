import { goneReason } from '../../src/delivery/switched-off-reason';

describe('why a 410 switched a webhook URL off', () => {
  it.each([
    ['an ordinary message, by its id', 410, 'm-1', 'track', 'answered HTTP 410 Gone to message m-1'],
    ['a delete notification, by its regulation and never its user (hashed)', 410, 'reg_0123456789abcdef0123456789abcdef:h1_AAAAAAAAAAAAAAAAAAAAAA', 'delete', 'answered HTTP 410 Gone to a delete notification of regulation reg_0123456789abcdef0123456789abcdef'],
    ['a delete notification, never its user (plaintext, PAYLOAD_ENCRYPTION=off)', 410, 'reg_0123456789abcdef0123456789abcdef:ada@example.com', 'delete', 'answered HTTP 410 Gone to a delete notification of regulation reg_0123456789abcdef0123456789abcdef'],
    ['a delete notification whose id has no regulation', 410, 'ada@example.com', 'delete', 'answered HTTP 410 Gone to a delete notification'],
  ])('names %s', (_name, status, messageId, type, expected) => {
    expect(goneReason(status, messageId, type)).toBe(expected);
  });
});

describe('why webhook-delivery: disable switched a webhook URL off', () => {
  it.each([
    ['an ordinary message, by its status and the header', 503, 'm-1', 'track', 'answered HTTP 503 with webhook-delivery: disable to message m-1'],
    ['a delete notification, never its user', 200, 'reg_0123456789abcdef0123456789abcdef:ada@example.com', 'delete', 'answered HTTP 200 with webhook-delivery: disable to a delete notification of regulation reg_0123456789abcdef0123456789abcdef'],
  ])('names %s', (_name, status, messageId, type, expected) => {
    expect(goneReason(status, messageId, type, true)).toBe(expected);
  });
});
