import { ACTIONS_INTEGRATION_NAME, INTEGRATION_NAME, integrationNameOf, isIntegrationEnabled } from '../../src/delivery/integrations';
import { destinationRulesReader } from '../../src/messages/destination-rules';
import { DEFAULT_CONSENT } from '../../src/rules/consent';
import { catalogIdOf, WEBHOOKS_ACTIONS_METADATA_ID, WEBHOOKS_METADATA_ID } from '../../src/segment/destination-shape';
import type { TransformationRecord } from '../../src/store/transformations';
import type { EnabledDestination } from '../../src/store/types';

describe('isIntegrationEnabled (seed: Selecting destinations)', () => {
  it.each([
    [undefined, true],
    [{}, true],
    [{ Webhooks: false }, false],
    [{ Webhooks: true }, true],
    [{ All: false }, false],
    [{ All: false, Webhooks: true }, true],
    [{ All: true, Webhooks: false }, false],
    [{ webhooks: false }, true],
    [{ All: false, webhooks: true }, false],
    [{ Webhooks: { someOption: 1 } }, true],
    [{ Mixpanel: false }, true],
  ])('%j → %s', (integrations, enabled) => {
    expect(isIntegrationEnabled(integrations as Record<string, unknown> | undefined)).toBe(enabled);
  });
});

describe("integrations keys as Segment names them: a destination's key by its kind", () => {
  it.each([
    ['a classic webhook destination', 'Webhooks', {}],
    ['an Actions destination (it has mappings)', 'Webhooks (Actions)', { mappings: [] }],
    ['a destination function: its display name', 'Enrich orders (Acme)', { function: { functionId: 'dfn_0123456789abcdef01234567', displayName: 'Enrich orders (Acme)' } }],
  ])('%s → %s', (_, name, destination) => {
    expect(integrationNameOf(destination)).toBe(name);
  });

  // Segment's catalog id of each kind: what a transformation's destinationMetadataId scopes by.
  it.each([
    ['a classic webhook destination', WEBHOOKS_METADATA_ID, {}],
    ['an Actions destination', WEBHOOKS_ACTIONS_METADATA_ID, { mappings: [] }],
    ['a destination function: the hex of its dfn_ id', '0123456789abcdef01234567', { function: { functionId: 'dfn_0123456789abcdef01234567' } }],
  ])('catalogIdOf %s → %s', (_, id, destination) => {
    expect(catalogIdOf(destination)).toBe(id);
  });

  // A function destination's key among the others: All and the webhook keys as Segment has them.
  it.each([
    [{ 'Enrich orders (Acme)': false }, false],
    [{ Webhooks: false, 'Webhooks (Actions)': false }, true],
    [{ All: false, 'Enrich orders (Acme)': true }, true],
    [{ All: false, Webhooks: true }, false],
    [{ 'enrich orders (acme)': false }, true],
  ])('a destination function named "Enrich orders (Acme)" with %j → %s', (integrations, enabled) => {
    expect(isIntegrationEnabled(integrations, integrationNameOf({ function: { displayName: 'Enrich orders (Acme)' } }))).toBe(enabled);
  });

  // Segment's documented examples (Selecting destinations), for both kinds of webhook destination.
  it.each([
    [{ 'Webhooks (Actions)': false }, { classic: true, actions: false }],
    [{ Webhooks: false }, { classic: false, actions: true }],
    [{ All: false, 'Webhooks (Actions)': true }, { classic: false, actions: true }],
    [{ All: false, Webhooks: true }, { classic: true, actions: false }],
    [{ All: true, 'Webhooks (Actions)': false, Webhooks: false }, { classic: false, actions: false }],
    [{ 'webhooks (actions)': false }, { classic: true, actions: true }],
    [{ constructor: false }, { classic: true, actions: true }],
  ])('%j → %j', (integrations, expected) => {
    expect({ classic: isIntegrationEnabled(integrations, INTEGRATION_NAME), actions: isIntegrationEnabled(integrations, ACTIONS_INTEGRATION_NAME) }).toEqual(expected);
  });
});

describe('which transformations reach each kind of destination at ingest', () => {
  const FUNCTION_ID = 'dfn_0123456789abcdef01234567';
  const OTHER_FUNCTION_ID = 'dfn_fedcba9876543210fedcba98';
  const record = (id: string, destinationMetadataId: string | null): TransformationRecord => ({
    id,
    sourceId: 'src_1',
    destinationMetadataId,
    name: id,
    enabled: true,
    if: 'all',
    newEventName: id,
    createdAt: 'then',
    updatedAt: 'then',
  });
  const records = [
    record('whole-source', null),
    record('webhooks', WEBHOOKS_METADATA_ID),
    record('actions', WEBHOOKS_ACTIONS_METADATA_ID),
    record('this-function', FUNCTION_ID.slice(4)),
    record('other-function', OTHER_FUNCTION_ID.slice(4)),
  ];
  const enabled: EnabledDestination[] = [
    { id: 'classic', webhookUrls: ['https://example.com'], consent: DEFAULT_CONSENT },
    { id: 'actions', webhookUrls: [], consent: DEFAULT_CONSENT, mappings: [{ name: 'm', trigger: 'all' }] },
    { id: 'function', webhookUrls: [], consent: DEFAULT_CONSENT, function: { functionId: FUNCTION_ID, displayName: 'Enrich orders (Acme)' } },
  ];

  it.each([
    ['classic', 'Webhooks', ['webhooks']],
    ['actions', 'Webhooks (Actions)', ['actions']],
    ['function', 'Enrich orders (Acme)', ['this-function']],
  ])('%s: integrations key %s, destination-scoped %j, and the whole source\'s', async (id, integrationName, scoped) => {
    const rulesOf = destinationRulesReader({ listEnabledFor: async () => [] }, () => undefined, { listEnabledFor: async () => records });
    const rules = (await rulesOf(enabled, 'src_1')).get(id)!;
    expect({
      integrationName: rules.integrationName,
      source: rules.transformations?.source.map((t) => t.id),
      destination: rules.transformations?.destination.map((t) => t.id),
    }).toEqual({ integrationName, source: ['whole-source'], destination: scoped });
  });
});
