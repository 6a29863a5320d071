import { censoredUrl, requestLogValue } from '../../src/api/request-log';

describe('request log lines name no user id', () => {
  it.each([
    ['a URL without a query', '/admin/deliveries', '/admin/deliveries'],
    ['the userId filter', '/admin/deliveries?userId=ada%40example.com', '/admin/deliveries?userId=[redacted]'],
    ['the userId filter among others, which stay', '/admin/deliveries?sourceId=src_1&userId=ada&status=failed', '/admin/deliveries?sourceId=src_1&userId=[redacted]&status=failed'],
    ['a repeated userId', '/admin/deliveries?userId=a&userId=b', '/admin/deliveries?userId=[redacted]&userId=[redacted]'],
    ['the name in another case or percent-encoded', '/admin/deliveries?USERID=a&user%49d=b', '/admin/deliveries?USERID=[redacted]&user%49d=[redacted]'],
    ['a userId without a value', '/admin/deliveries?userId', '/admin/deliveries?userId=[redacted]'],
    ['a name that only contains userId', '/admin/deliveries?myuserId=x', '/admin/deliveries?myuserId=x'],
    ['a malformed escape in a name', '/admin/deliveries?%E0%A4%A=x', '/admin/deliveries?%E0%A4%A=x'],
  ])('%s', (_name, url, expected) => {
    expect(censoredUrl(url)).toBe(expected);
  });

  it('keeps Fastify\'s request fields, the URL censored', () => {
    const req = { method: 'GET', url: '/admin/deliveries?userId=zoë', headers: { 'accept-version': '1' }, host: 'localhost', ip: '127.0.0.1', socket: { remotePort: 5000 } };
    expect(requestLogValue(req)).toEqual({ method: 'GET', url: '/admin/deliveries?userId=[redacted]', version: '1', host: 'localhost', remoteAddress: '127.0.0.1', remotePort: 5000 });
  });
});
