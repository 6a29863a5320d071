import { isMaskedSecret, readSegmentDestination, WEBHOOKS_ACTIONS_METADATA_ID, WEBHOOKS_METADATA_ID } from '../../src/segment/destination-shape';

const classicSettings = JSON.stringify({ globalHook: 'https://hooks.example.com/a', hooks: [{ headers: [{ key: '', value: '' }], hook: 'https://hooks.example.com/a' }], sharedSecret: '' });

it.each([
  [
    "a Terraform classic Webhooks destination (settings a JSON string, Segment's empty header row)",
    { enabled: true, metadata: { id: WEBHOOKS_METADATA_ID, contacts: null, partner_owned: false }, name: 'Webhooks', settings: classicSettings, source_id: 'b1TTjVj38UH445ezhJU3Y6' },
    { kind: 'webhooks', body: { enabled: true, name: 'Webhooks', webhooks: [{ url: 'https://hooks.example.com/a' }] }, changes: [], maskedSecrets: [] },
  ],
  [
    'a Public API classic destination with two hooks, headers and a secret',
    {
      sourceId: 's1',
      metadataId: WEBHOOKS_METADATA_ID,
      name: 'Orders',
      enabled: false,
      settings: { hooks: [{ hook: 'https://a.example', headers: [{ key: 'X-Team', value: 'orders' }] }, { hook: 'https://b.example' }], sharedSecret: 'a real secret' },
    },
    {
      kind: 'webhooks',
      body: { enabled: false, name: 'Orders', sharedSecret: 'a real secret', webhooks: [{ url: 'https://a.example', headers: { 'X-Team': 'orders' } }, { url: 'https://b.example' }] },
      changes: [expect.stringContaining('Segment sends each event to all 2 URLs; Switchyard tries them in order')],
      maskedSecrets: [],
    },
  ],
  [
    'a Webhooks (Actions) destination with a masked secret',
    { metadataId: WEBHOOKS_ACTIONS_METADATA_ID, name: 'Webhooks (Actions)', enabled: true, settings: { sharedSecret: '••••••••••abcd' } },
    { kind: 'actions', body: { enabled: true, name: 'Webhooks (Actions)', type: 'actions' }, changes: [], maskedSecrets: ['sharedSecret'] },
  ],
])('reads %s', (_, input, expected) => {
  expect(readSegmentDestination(input)).toEqual({ ok: true, destination: expected });
});

it.each([
  [
    { metadataId: '5d2d2e7f3a7f0d0001f4d2b0', metadata: { name: 'Braze (Actions)' }, name: 'Braze prod' },
    422,
    'metadataId: Braze (Actions) is a Segment catalog destination (5d2d2e7f3a7f0d0001f4d2b0); Switchyard delivers to webhooks and functions',
  ],
  [{ metadata: { id: '5d2d2e7f3a7f0d0001f4d2b0' }, name: 'Amplitude' }, 422, 'metadataId: Amplitude is a Segment catalog destination'],
  [{ name: 'x' }, 400, 'metadataId: is required'],
  [{ metadataId: WEBHOOKS_METADATA_ID, settings: '{not json' }, 400, 'settings: is a string that is not the JSON'],
  [{ metadataId: WEBHOOKS_METADATA_ID, settings: { hooks: [] } }, 400, 'settings.hooks: holds no webhook URL'],
  [{ metadataId: WEBHOOKS_METADATA_ID, settings: 7 }, 400, 'settings: must be an object or its JSON string'],
])('refuses %j (%d), naming the field', (input, status, message) => {
  const read = readSegmentDestination(input);
  expect(read.ok).toBe(false);
  if (read.ok) return;
  expect(read.status).toBe(status);
  expect(`${read.field}: ${read.rule}`).toContain(message);
});

it.each([
  ['••••••••••abcd', true],
  ['••••••••••', true],
  ['abcd••••', false],
  ['a real secret', false],
  ['', false],
  [undefined, false],
])('sees %j as masked: %s', (value, masked) => {
  expect(isMaskedSecret(value)).toBe(masked);
});

describe('a destination function in Segment\'s shape', () => {
  const lookup = (id: string) => (id === 'ab'.repeat(12) ? { functionId: `dfn_${'ab'.repeat(12)}`, displayName: 'CRM' } : undefined);
  it('becomes a function destination when its metadata id is the hex of a dfn_ id Switchyard holds', () => {
    expect(readSegmentDestination({ metadataId: 'ab'.repeat(12), name: 'CRM (Acme)', enabled: true, settings: '{"apiKey":"k-123"}' }, lookup)).toEqual({
      ok: true,
      destination: { kind: 'function', body: { name: 'CRM (Acme)', enabled: true, type: 'function', functionId: `dfn_${'ab'.repeat(12)}`, settings: { apiKey: 'k-123' } }, changes: [], maskedSecrets: [] },
    });
  });
  it('asks for a masked setting, and stays a catalog refusal for an id it does not hold', () => {
    expect(readSegmentDestination({ metadataId: 'ab'.repeat(12), enabled: true, settings: { apiKey: '••••••••••abcd' } }, lookup)).toMatchObject({ ok: true, destination: { maskedSecrets: ['apiKey'] } });
    expect(readSegmentDestination({ metadataId: 'cd'.repeat(12), enabled: true }, lookup)).toMatchObject({ ok: false, status: 422, field: 'metadataId' });
  });
});
