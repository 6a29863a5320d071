import { requestMentions } from '../../src/messages/request-mentions';

const request = (body: string, headers: Record<string, string> = {}, url = 'https://switchyard.example/functions?b=x') => ({ request: { headers, body, url } });

describe("requestMentions: whether a DELETE regulation's users are named by a source function's recorded request", () => {
  it.each([
    ['a JSON string value', request(JSON.stringify({ customer: { email: 'ann@example.com' } })), ['ann@example.com'], true],
    ['a JSON number value', request(JSON.stringify({ data: [{ user_id: 42 }] })), ['42'], true],
    ['a value deep in a JSON body', request(JSON.stringify({ a: { b: { c: { d: ['x', { e: 'u-9' }] } } } })), ['u-9'], true],
    ['not part of a JSON value (no substring match)', request(JSON.stringify({ order: 'order-42-x', total: 420 })), ['42'], false],
    ['a JSON key is no value', request(JSON.stringify({ 'u-9': true })), ['u-9'], false],
    ['a form field value, decoded', request('user=ann%40example.com&plan=pro'), ['ann@example.com'], true],
    ['a text body token', request('customer ann; order 7'), ['ann'], true],
    ['a header value', request('{}', { 'x-user': 'u-7' }), ['u-7'], true],
    ['a query value', request('{}', {}, 'https://h/functions?b=x&user=u-8'), ['u-8'], true],
    ['the error message, as text', { ...request('{}'), error: { message: 'cannot read order of u-5 today' } }, ['u-5'], true],
    ['the console output, as text', { ...request('{}'), logs: ['processing u-6'] }, ['u-6'], true],
    ['another user', request(JSON.stringify({ user: 'u-1' })), ['u-2'], false],
    ['no ids', request(JSON.stringify({ user: '' })), [''], false],
  ] as const)('%s', (_name, record, ids, expected) => {
    expect(requestMentions(record, ids)).toBe(expected);
  });

  it('reads a deeply nested body without recursion', () => {
    let body = '"u-deep"';
    for (let i = 0; i < 50_000; i++) body = `[${body}]`;
    expect(requestMentions(request(body), ['u-deep'])).toBe(true);
  });
});
