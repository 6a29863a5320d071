import {
  findWebhookViolation,
  headerNameRule,
  headerValueRule,
  violationMessage,
  webhookUrlRule,
} from '../../src/delivery/webhook-rules';

describe('webhookUrlRule', () => {
  it.each([
    ['http://example.com', undefined],
    ['https://example.com/hooks?x=1#frag', undefined],
    ['https://127.0.0.1:8443/path', undefined],
    ['HTTPS://EXAMPLE.COM/', undefined],
    ['https://[::1]/hook', undefined],
  ])('accepts %s', (url, expected) => {
    expect(webhookUrlRule(url)).toBe(expected);
  });

  it.each([
    ['ftp://example.com/file', 'must use the http or https scheme, not ftp'],
    ['file:///etc/passwd', 'must use the http or https scheme, not file'],
    ['javascript:alert(1)', 'must use the http or https scheme, not javascript'],
    ['/relative/path', 'must be a full URL including the http or https scheme'],
    ['example.com/hook', 'must be a full URL including the http or https scheme'],
    ['//example.com/hook', 'must be a full URL including the http or https scheme'],
    ['http://', 'must be a full URL including the http or https scheme'],
    ['https://user:pass@example.com/', 'must not embed credentials (user:password@); use a static header instead'],
    ['https://user@example.com/', 'must not embed credentials (user:password@); use a static header instead'],
    [' https://example.com', 'must not contain spaces or control characters'],
    ['https://exa\nmple.com', 'must not contain spaces or control characters'],
    ['https://example.com/a b', 'must not contain spaces or control characters'],
  ])('rejects %j: %s', (url, rule) => {
    expect(webhookUrlRule(url)).toBe(rule);
  });
});

describe('headerNameRule', () => {
  it.each(['X-Api-Key', 'authorization', 'x_custom.1', "!#$%&'*+-.^_`|~"])('accepts %s', (name) => {
    expect(headerNameRule(name)).toBeUndefined();
  });

  it.each([
    ['X Api', '"X Api" is not a valid HTTP header name'],
    ['X:Api', '"X:Api" is not a valid HTTP header name'],
    ['', '"" is not a valid HTTP header name'],
    ['X-\r\nInjected', '"X-\\r\\nInjected" is not a valid HTTP header name'],
    ['Clé', '"Clé" is not a valid HTTP header name'],
  ])('rejects %j as not a token', (name, rule) => {
    expect(headerNameRule(name)).toBe(rule);
  });

  it.each([
    'Content-Type',
    'content-length',
    'User-Agent',
    'Host',
    'X-Signature',
    'webhook-id',
    'Webhook-Timestamp',
    'WEBHOOK-SIGNATURE',
  ])('refuses to override %s, which Switchyard sets', (name) => {
    expect(headerNameRule(name)).toBe(`"${name}" is set by Switchyard and cannot be overridden`);
  });

  it.each(['Connection', 'transfer-encoding', 'Keep-Alive', 'upgrade', 'Expect'])(
    'refuses %s, which the HTTP client manages',
    (name) => {
      expect(headerNameRule(name)).toBe(`"${name}" is managed by the HTTP connection and cannot be set`);
    },
  );
});

describe('headerValueRule', () => {
  it.each(['', 'Bearer abc', 'tab\tinside', 'ünïcode'])('accepts %j', (value) => {
    expect(headerValueRule(value)).toBeUndefined();
  });

  it.each(['a\r\nX-Injected: 1', 'line\nbreak', 'carriage\rreturn', 'nul\u0000'])('rejects %j', (value) => {
    expect(headerValueRule(value)).toBe('must not contain CR, LF or NUL characters');
  });

  // Beyond Latin-1, or a control character: undici throws building the request (UND_ERR_INVALID_ARG).
  it.each(['tök€n', 'emoji 🙂', 'bell\u0007', 'del\u007f', 'vertical\u000btab', '\u0100'])('rejects %j, which is no HTTP field value', (value) => {
    expect(headerValueRule(value)).toBe('must be a valid HTTP field value: visible ASCII, spaces, tabs or Latin-1 characters (RFC 9110)');
  });

  it.each(['visible !"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~', 'latin-1 \u00a0\u00ff'])('accepts %j (what undici sends)', (value) => {
    expect(headerValueRule(value)).toBeUndefined();
  });
});

describe('findWebhookViolation', () => {
  const hook = (url = 'https://example.com/hook', headers?: Record<string, string>) => ({ url, headers });
  const headers = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`X-H${i}`, 'v']));

  it.each([
    ['no webhooks', []],
    ['five webhooks', Array.from({ length: 5 }, () => hook())],
    ['five headers', [hook(undefined, headers(5))]],
  ])('accepts %s', (_name, webhooks) => {
    expect(findWebhookViolation(webhooks)).toBeUndefined();
  });

  it.each([
    ['six webhooks', Array.from({ length: 6 }, () => hook()), 'webhooks: at most 5 webhook URLs per destination'],
    ['six headers', [hook(), hook(undefined, headers(6))], 'webhooks[1].headers: at most 5 static headers per webhook'],
    ['a bad second url', [hook(), hook('ftp://example.com')], 'webhooks[1].url: must use the http or https scheme, not ftp'],
    [
      'a reserved header',
      [hook(undefined, { 'content-type': 'text/plain' })],
      'webhooks[0].headers: "content-type" is set by Switchyard and cannot be overridden',
    ],
    [
      'the same header twice in different case',
      [hook(undefined, { 'X-Key': 'a', 'x-key': 'b' })],
      'webhooks[0].headers: "x-key" is given twice (header names are case-insensitive)',
    ],
    [
      'a header value with CRLF',
      [hook(undefined, { 'X-Key': 'a\r\nHost: evil' })],
      'webhooks[0].headers.X-Key: must not contain CR, LF or NUL characters',
    ],
    [
      'a header value beyond Latin-1',
      [hook(), hook(undefined, { 'X-Token': 'tök€n' })],
      'webhooks[1].headers.X-Token: must be a valid HTTP field value: visible ASCII, spaces, tabs or Latin-1 characters (RFC 9110)',
    ],
  ])('rejects %s, naming the field', (_name, webhooks, message) => {
    const violation = findWebhookViolation(webhooks);
    expect(violation && violationMessage(violation)).toBe(message);
  });

  it('never repeats a header value in its message', () => {
    const violation = findWebhookViolation([hook(undefined, { 'X-Key': 'secret-value\n' })]);
    expect(violation && violationMessage(violation)).not.toContain('secret-value');
  });
});
