import { laneKey, mappingAttemptSummary, mappingsReport } from '../../src/delivery/mapping-lanes';
import { accessTokenOf, staticAuthorization, tokenRequestBody, tokenReuseMs } from '../../src/delivery/outbound-auth';
import { MASKED_VALUE, maskedMappings, unmaskedMappings } from '../../src/mappings/masked-headers';
import type { ActionsMapping, OutboundAuth } from '../../src/mappings/types';
import { secretsKept, type SecretsReach } from '../../src/mappings/url-bound-secrets';
import { findAuthViolation, findMappingsViolation } from '../../src/mappings/validate-mappings';
import { DEFAULT_CONSENT } from '../../src/rules/consent';
import { decideDelivery } from '../../src/rules/delivery-decision';
import { compileTrigger, type CompiledTrigger } from '../../src/rules/mapping-triggers';

const mapping = (name: string, change: Partial<ActionsMapping['settings']> & { trigger?: string } = {}): ActionsMapping => {
  const { trigger = 'all', ...settings } = change;
  return { name, enabled: true, trigger, settings: { url: 'https://example.com/hook', method: 'POST', headers: {}, data: { '@path': '$.' }, ...settings } };
};

describe('findMappingsViolation: the rules a saved mapping keeps (400 naming the mapping, the field and the directive)', () => {
  it.each<[string, ActionsMapping[], string | undefined]>([
    ['one valid mapping', [mapping('A')], undefined],
    ['no mapping', [], 'mappings: an actions destination needs at least one mapping'],
    ['six mappings', ['a', 'b', 'c', 'd', 'e', 'f'].map((n) => mapping(n)), 'mappings: at most 5 mappings per destination'],
    ['a name used twice', [mapping('A'), mapping('A')], 'mappings[1].name: mapping names must be unique within a destination; "A" is used twice'],
    ['a trigger FQL cannot parse', [mapping('A', { trigger: 'event = ' })], 'mappings[0].trigger: mapping "A": at column 9: expected a field, a value or a function, got the end of the condition'],
    ['a URL without scheme', [mapping('A', { url: 'example.com' })], 'mappings[0].settings.url: mapping "A": must be a full URL including the http or https scheme'],
    ['a header Switchyard sets', [mapping('A', { headers: { 'X-Signature': 'x' } })], 'mappings[0].settings.headers.X-Signature: mapping "A": "X-Signature" is set by Switchyard and cannot be overridden'],
    ['an unknown directive', [mapping('A', { data: { who: { '@nonsense': 1 } } })], 'mappings[0].settings.data: mapping "A": /who has an invalid directive: @nonsense.'],
    ['a directive of the wrong shape', [mapping('B'), mapping('A', { data: { t: { '@template': 1 } } })], 'mappings[1].settings.data: mapping "A": /t/@template should be a string or a mapping directive but it is a number.'],
  ])('%s', (_, mappings, expected) => {
    const violation = findMappingsViolation(mappings);
    if (expected === undefined) expect(violation).toBeUndefined();
    else expect(`${violation!.field}: ${violation!.rule}`).toContain(expected);
  });

  it('checks auth URLs and PEM shapes without echoing a value', () => {
    expect(findAuthViolation({ type: 'oauth2', tokenUrl: 'ftp://x', clientId: 'c', clientSecret: 's' }, null)).toEqual({ field: 'auth.tokenUrl', rule: 'must use the http or https scheme, not ftp' });
    expect(findAuthViolation({ type: 'bearer', token: 'a\nb' }, null)).toEqual({ field: 'auth.token', rule: 'must not contain CR, LF or NUL characters' });
    expect(findAuthViolation(null, { certificate: 'not pem', privateKey: 'x' })?.field).toBe('tls.certificate');
    expect(findAuthViolation(null, { certificate: '-----BEGIN CERTIFICATE-----\nAA\n-----END CERTIFICATE-----', privateKey: 'secret-not-pem' })).toEqual({ field: 'tls.privateKey', rule: 'must be a PEM private key (-----BEGIN PRIVATE KEY-----)' });
  });

  it.each<[string, string | undefined]>([
    ['https://idp.example.com/oauth/token', undefined],
    ['http://idp.example.com/oauth/token', 'must use https (RFC 6749 §3.2: the client secret travels in the request); http only to a loopback address'],
    ['http://10.0.0.5/token', 'must use https (RFC 6749 §3.2: the client secret travels in the request); http only to a loopback address'],
    ['http://127.0.0.1:8080/token', undefined],
    ['http://localhost/token', undefined],
    ['http://[::1]:9000/token', undefined],
  ])('answers 400 naming auth.tokenUrl for an http token endpoint off this host: %s', (tokenUrl, rule) => {
    expect(findAuthViolation({ type: 'oauth2', tokenUrl, clientId: 'c', clientSecret: 's' }, null)).toEqual(rule && { field: 'auth.tokenUrl', rule });
  });

  it.each<[string, OutboundAuth, string]>([
    ['a bearer token', { type: 'bearer', token: MASKED_VALUE }, 'auth.token'],
    ['a basic password', { type: 'basic', username: 'u', password: MASKED_VALUE }, 'auth.password'],
    ['an OAuth2 client secret', { type: 'oauth2', tokenUrl: 'https://idp.example.com/token', clientId: 'c', clientSecret: MASKED_VALUE }, 'auth.clientSecret'],
  ])('answers 400 naming the field when the mask comes back as %s (auth keeps no saved value to stand for)', (_case, auth, field) => {
    expect(findAuthViolation(auth, null)).toEqual({ field, rule: `${MASKED_VALUE} is the mask the API shows in place of a secret; auth is replaced whole, so send the secret itself` });
  });
});

describe('masked mapping headers', () => {
  const saved = [mapping('A', { headers: { 'X-Key': 'secret-1' } })];

  it('shows every value as the mask and keeps the saved value when the mask comes back for the same mapping at the same URL', () => {
    expect(maskedMappings(saved)[0].settings.headers).toEqual({ 'X-Key': MASKED_VALUE });
    const given = [mapping('A', { headers: { 'X-Key': MASKED_VALUE, 'X-New': 'v' } })];
    expect(unmaskedMappings(given, saved)).toEqual({ mappings: [mapping('A', { headers: { 'X-Key': 'secret-1', 'X-New': 'v' } })] });
  });

  it.each<[string, ActionsMapping[], string]>([
    [
      'a renamed mapping (GET, edit the name, PATCH)',
      [mapping('A renamed', { headers: { 'X-Key': MASKED_VALUE } })],
      'mappings[0].settings.headers.X-Key: ******** keeps a saved value, and no saved mapping is named "A renamed" (a renamed or new mapping); send the value itself',
    ],
    [
      'a mapping pointed at another URL',
      [mapping('A', { url: 'https://attacker.example/collect', headers: { 'X-Key': MASKED_VALUE } })],
      "mappings[0].settings.headers.X-Key: ******** keeps a saved value, and the mapping's URL changed, and a saved value stays with the URL it was set for; send the value itself",
    ],
    ['a header with no saved value', [mapping('A', { headers: { 'X-Other': MASKED_VALUE } })], 'mappings[0].settings.headers.X-Other: ******** keeps a saved value, and no value is saved for this header; send the value itself'],
    ['a header named after an Object.prototype member', [mapping('A', { headers: { constructor: MASKED_VALUE } })], 'mappings[0].settings.headers.constructor: ******** keeps a saved value, and no value is saved for this header; send the value itself'],
  ])('answers 400 naming the header when the mask comes back for %s', (_case, given, message) => {
    const answer = unmaskedMappings(given, saved);
    expect('violation' in answer && `${answer.violation.field}: ${answer.violation.rule}`).toBe(message);
  });

  it('keeps a value supplied again with the new URL', () => {
    const given = [mapping('A', { url: 'https://new.example.com/hook', headers: { 'X-Key': 'secret-2' } })];
    expect(unmaskedMappings(given, saved)).toEqual({ mappings: given });
  });
});

describe('secretsKept: auth and the client certificate stay with the URLs they were set for', () => {
  const reach = (webhookUrls: string[], mappingUrls: string[] = [], tokenUrl?: string): SecretsReach => ({
    webhookUrls,
    mappings: mappingUrls.map((url) => mapping('m', { url })),
    auth: tokenUrl ? { type: 'oauth2', tokenUrl, clientId: 'c', clientSecret: 's' } : { type: 'bearer', token: 't' },
  });
  const neither = { auth: false, tls: false };
  it.each<[string, SecretsReach, SecretsReach, { auth: boolean; tls: boolean }, { dropAuth: boolean; dropTls: boolean }]>([
    ['the same URLs', reach(['https://a.example/']), reach(['https://a.example/']), neither, { dropAuth: false, dropTls: false }],
    ['a URL removed', reach(['https://a.example/', 'https://b.example/']), reach(['https://b.example/']), neither, { dropAuth: false, dropTls: false }],
    ['URLs reordered', reach(['https://a.example/', 'https://b.example/']), reach(['https://b.example/', 'https://a.example/']), neither, { dropAuth: false, dropTls: false }],
    ['a webhook re-pointed', reach(['https://a.example/']), reach(['https://attacker.example/']), neither, { dropAuth: true, dropTls: true }],
    ['a webhook URL added', reach(['https://a.example/']), reach(['https://a.example/', 'https://attacker.example/']), neither, { dropAuth: true, dropTls: true }],
    ['a mapping re-pointed', reach([], ['https://crm.example/']), reach([], ['https://attacker.example/']), neither, { dropAuth: true, dropTls: true }],
    ['a webhook re-pointed, auth given again', reach(['https://a.example/']), reach(['https://b.example/']), { auth: true, tls: false }, { dropAuth: false, dropTls: true }],
    ['a webhook re-pointed, both given again', reach(['https://a.example/']), reach(['https://b.example/']), { auth: true, tls: true }, { dropAuth: false, dropTls: false }],
    ['an OAuth2 tokenUrl changed (auth given whole)', reach(['https://a.example/'], [], 'https://idp.example/token'), reach(['https://a.example/'], [], 'https://attacker.example/token'), { auth: true, tls: false }, { dropAuth: false, dropTls: true }],
  ])('%s', (_case, before, after, supplied, kept) => expect(secretsKept(before, after, supplied)).toEqual(kept));
});

describe("decideDelivery: an actions destination's triggers", () => {
  const trigger = (name: string, fql: string) => compileTrigger({ name, trigger: fql }) as CompiledTrigger;
  const decide = (body: Record<string, unknown>, mappings: CompiledTrigger[]) =>
    decideDelivery({ body: { type: 'track', ...body } as never, integrations: undefined, suppressed: false, destination: { consent: DEFAULT_CONSENT, filters: [], mappings } });
  const triggers = [trigger('Orders', 'event = "Order Completed"'), trigger('Big', 'properties.total > 100'), trigger('Not tests', '!(event = "Test")')];

  it.each<[string, Record<string, unknown>, ReturnType<typeof decide>]>([
    ['names every mapping whose trigger the message meets, in saved order', { event: 'Order Completed', properties: { total: 150 } }, { send: expect.anything(), mappings: ['Orders', 'Big', 'Not tests'] }],
    ['a leading ! works in triggers too', { event: 'Viewed', properties: { total: 1 } }, { send: expect.anything(), mappings: ['Not tests'] }],
    ['stops with `trigger` when none is met', { event: 'Test', properties: { total: 1 } }, { stop: 'trigger' }],
  ])('%s', (_, body, expected) => {
    expect(decide(body, triggers)).toEqual(expected);
  });

  it('runs after the other rules: a suppressed user stops at suppression, not at the trigger', () => {
    expect(decideDelivery({ body: { type: 'track', event: 'Test' } as never, integrations: undefined, suppressed: true, destination: { consent: DEFAULT_CONSENT, filters: [], mappings: triggers } })).toEqual({ stop: 'suppressed' });
  });
});

describe('mapping lanes', () => {
  it("keys a webhooks destination's lane by its id, as before mappings", () => {
    expect(laneKey({ destinationId: 'dst_1' })).toBe('dst_1');
    expect(laneKey({ destinationId: 'dst_1', mapping: 'A' })).not.toBe('dst_1');
  });

  it('names the mapping, never its URL, in the attempt summary', () => {
    expect(mappingAttemptSummary('Slack [alert]', 2, 'dst_1')).toBe('mapping "Slack \\[alert\\]" of dst_1 · round 2');
  });

  it.each<[string, ('delivered' | 'failed' | 'stopped')[], string, string | undefined]>([
    ['every request delivered', ['delivered', 'delivered'], 'delivered', undefined],
    ['one failed', ['delivered', 'failed'], 'failed', 'mapping "B": boom'],
    ['one stopped, none failed', ['stopped', 'delivered'], 'stopped', 'mapping "A": boom'],
  ])('adds the lanes up: %s', (_, statuses, status, reason) => {
    const lanes = statuses.map((s, i) => ({ destinationId: 'dst_1', status: s, rounds: i + 1, ...(s !== 'delivered' && { reason: 'boom' }) }));
    const report = mappingsReport('dst_1', ['A', 'B'], lanes);
    expect(report).toMatchObject({ destinationId: 'dst_1', status, rounds: 2, mappings: [{ name: 'A', status: statuses[0] }, { name: 'B', status: statuses[1] }] });
    expect(report.reason).toBe(reason);
  });
});

describe('outbound auth decisions', () => {
  it('builds bearer and basic (RFC 7617) headers; none for OAuth2 or no auth', () => {
    expect(staticAuthorization({ type: 'bearer', token: 't0k' })).toBe('Bearer t0k');
    expect(staticAuthorization({ type: 'basic', username: 'Aladdin', password: 'open sesame' })).toBe('Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==');
    expect(staticAuthorization({ type: 'oauth2', tokenUrl: 'https://a', clientId: 'c', clientSecret: 's' })).toBeUndefined();
    expect(staticAuthorization(null)).toBeUndefined();
  });

  it.each([
    [3600, 3_570_000],
    [40, 20_000],
    [undefined, 270_000],
    [-5, 270_000],
  ])('reuses a token with expires_in %p for %p ms', (expiresIn, ms) => {
    expect(tokenReuseMs(expiresIn)).toBe(ms);
  });

  it('asks for client credentials in the form body, scope and audience when set', () => {
    expect(tokenRequestBody({ type: 'oauth2', tokenUrl: 'https://a', clientId: 'c 1', clientSecret: 's&2', audience: 'api' })).toBe('grant_type=client_credentials&client_id=c+1&client_secret=s%262&audience=api');
  });

  it.each<[number, string, ReturnType<typeof accessTokenOf>]>([
    [200, '{"access_token":"abc","expires_in":60}', { token: 'abc', expiresIn: 60 }],
    [500, 'oops', { reason: 'HTTP 500' }],
    [200, '<html>', { reason: 'the answer is not JSON' }],
    [200, '{"error":"invalid_client"}', { reason: 'the answer has no access_token' }],
  ])('reads a token answer: HTTP %p %s', (status, body, expected) => {
    expect(accessTokenOf(status, body)).toEqual(expected);
  });
});
