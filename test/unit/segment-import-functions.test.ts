import { planImport } from '../../src/segment/import-plan';
import type { SegmentResource } from '../../src/segment/read-export';

/**
 * How a workspace import plans Segment functions, and what a source keeps (pure: no store, no code check run here; the
 * refusals of that check come in as `codeRefusals`): each kind the functions API takes moves, what
 * Switchyard does not run is said, and a destination running an exported function moves as a
 * function destination that names it by Segment id.
 */
const HEX = '6425a1b2c3d4e5f60718293a';
const fn = (segmentId: string, kind: string, extra: Record<string, unknown> = {}): SegmentResource => ({
  type: 'segment_function',
  segmentId,
  file: 'f.tf',
  attributes: {
    code: 'async function onTrack() {}',
    resource_type: kind,
    display_name: 'Fn',
    description: null,
    settings: [{ name: 'apiKey', label: 'API key', description: '', type: 'STRING', required: true, sensitive: true }],
    ...extra,
  },
});
const source: SegmentResource = { type: 'segment_source', segmentId: 'src1', file: 's.tf', attributes: { name: 'Web' } };
const destination = (metadataId: string): SegmentResource => ({
  type: 'segment_destination',
  segmentId: 'dest1',
  file: 'd.tf',
  attributes: { enabled: true, metadata: { id: metadataId }, name: 'Runs it', settings: '{"apiKey":"••••••••••f00d","region":"eu"}', source_id: 'src1' },
});

describe('planImport: Segment functions', () => {
  it.each([
    ['DESTINATION', 'dfn_1', 'unchanged', undefined],
    ['SOURCE', 'sfn_1', 'changed', /the function moves, but its source attachment does not: a Switchyard source .* cannot run a source function/],
    ['INSERT_DESTINATION', 'ifnd_1', 'unchanged', undefined],
  ])('a %s function moves through POST /admin/functions', (kind, segmentId, outcome, change) => {
    const plan = planImport([fn(segmentId, kind)]);
    expect(plan.objects[0]).toMatchObject({ kind: 'function', segmentId, outcome });
    if (change) expect(plan.objects[0].changes).toEqual([expect.stringMatching(change)]);
    else expect(plan.objects[0].changes).toBeUndefined();
    expect(plan.writes.map((w) => w.write)).toEqual([
      { kind: 'function', segmentId, body: { resourceType: kind, code: 'async function onTrack() {}', displayName: 'Fn', settings: [expect.objectContaining({ name: 'apiKey', sensitive: true })] } },
    ]);
  });

  it.each([
    ['a source insert function', fn('isfn_1', 'INSERT_SOURCE'), /^resource_type: INSERT_SOURCE .*SOURCE, DESTINATION and INSERT_DESTINATION functions only/],
    ['an unknown kind', fn('xfn_1', 'BATCH'), /^resource_type: "BATCH" is not one of SOURCE, DESTINATION, INSERT_DESTINATION$/],
  ])('%s cannot move, and says why', (_name, resource, reason) => {
    const plan = planImport([resource]);
    expect(plan.objects).toEqual([expect.objectContaining({ kind: 'function', outcome: 'cannot', reason: expect.stringMatching(reason) })]);
    expect(plan.writes).toEqual([]);
  });

  const webhooks: SegmentResource = { type: 'segment_destination', segmentId: 'hook1', file: 'h.tf', attributes: { enabled: true, metadata: { id: '54521fdc25e721e32a72ef04' }, name: 'Hook', settings: '{"hooks":[{"hook":"https://hooks.example.com/a"}]}', source_id: 'src1' } };
  const instance = (segmentId: string, attributes: Record<string, unknown>): SegmentResource => ({ type: 'segment_insert_function_instance', segmentId, file: 'i.tf', attributes: { name: 'Mask emails', enabled: true, function_id: HEX, integration_id: 'hook1', settings: '{"apiKey":"••••••••••f00d"}', ...attributes } });

  it('an insert function instance moves onto its destination when both it and its function move, a masked secret asked for by name', () => {
    const plan = planImport([source, fn(`ifnd_${HEX}`, 'INSERT_DESTINATION'), webhooks, instance('ins1', {})], { ins1: {} });
    const line = plan.objects.find((o) => o.kind === 'insert_function_instance');
    expect(line).toMatchObject({ segmentId: 'ins1', outcome: 'changed', secretsNeeded: ['ins1.apiKey'] });
    expect(plan.writes.map((w) => w.write).find((w) => w.kind === 'insert_function_instance')).toEqual({
      kind: 'insert_function_instance',
      segmentId: 'ins1',
      functionSegmentId: `ifnd_${HEX}`,
      destinationSegmentId: 'hook1',
      body: { name: 'Mask emails', enabled: true, settings: {} },
    });
    const given = planImport([source, fn(`ifnd_${HEX}`, 'INSERT_DESTINATION'), webhooks, instance('ins1', {})], { ins1: { apiKey: 'real-key' } });
    expect(given.writes.find((w) => w.write.kind === 'insert_function_instance')?.write).toMatchObject({ body: { settings: { apiKey: 'real-key' } } });
  });

  it.each([
    ['its function is not in the export', [source, webhooks, instance('ins1', {})], /^function_id: its insert function 6425a1b2c3d4e5f60718293a is not in the export/],
    ['its destination does not move', [source, fn(`ifnd_${HEX}`, 'INSERT_DESTINATION'), instance('ins1', {})], /^integration_id: its destination hook1 does not move/],
    ['a second one on the same destination', [source, fn(`ifnd_${HEX}`, 'INSERT_DESTINATION'), webhooks, instance('ins0', {}), instance('ins1', {})], /^integration_id: another insert function instance .* at most one/],
  ])('an insert function instance cannot move when %s', (_name, resources, reason) => {
    const plan = planImport(resources);
    expect(plan.objects.find((o) => o.segmentId === 'ins1')).toMatchObject({ kind: 'insert_function_instance', outcome: 'cannot', reason: expect.stringMatching(reason) });
  });

  it("a destination whose metadata id is an exported function's hex id runs that function; its masked setting is asked for, never sent", () => {
    const plan = planImport([source, fn(`dfn_${HEX}`, 'DESTINATION'), destination(HEX)]);
    expect(plan.objects.find((o) => o.kind === 'destination')).toMatchObject({ outcome: 'changed', secretsNeeded: ['dest1.apiKey'] });
    const write = plan.writes.find((w) => w.write.kind === 'destination')!.write;
    expect(write).toMatchObject({ functionSegmentId: `dfn_${HEX}`, body: { type: 'function', name: 'Runs it', enabled: true, settings: { region: 'eu' } } });
    expect(plan.writes.map((w) => w.write.kind)).toEqual(['source', 'function', 'destination']);
  });

  it('with the secret given, the function destination moves unchanged with it', () => {
    const plan = planImport([source, fn(`dfn_${HEX}`, 'DESTINATION'), destination(HEX)], { dest1: { apiKey: 'the-key' } });
    expect(plan.objects.find((o) => o.kind === 'destination')).toMatchObject({ outcome: 'unchanged' });
    expect(plan.writes.find((w) => w.write.kind === 'destination')!.write).toMatchObject({ body: { settings: { apiKey: 'the-key', region: 'eu' } } });
  });

  it('a function its code check refuses cannot move with that reason, nor can a destination running it', () => {
    const plan = planImport([source, fn(`dfn_${HEX}`, 'DESTINATION'), destination(HEX)], {}, { [`dfn_${HEX}`]: 'Switchyard refuses it (400): code: defines no handler' });
    expect(plan.objects.find((o) => o.kind === 'function')).toMatchObject({ outcome: 'cannot', reason: 'Switchyard refuses it (400): code: defines no handler' });
    expect(plan.objects.find((o) => o.kind === 'destination')).toMatchObject({ outcome: 'cannot', reason: `it runs the function dfn_${HEX}, which cannot move (see its line)` });
    expect(plan.writes.map((w) => w.write.kind)).toEqual(['source']);
  });
  it("a destination function exported with display_name null (Segment's provider drops it) is named after the destination running it, said as a change", () => {
    const plan = planImport([source, fn(`dfn_${HEX}`, 'DESTINATION', { display_name: null }), destination(HEX)], { dest1: { apiKey: 'the-key' } });
    expect(plan.objects.find((o) => o.kind === 'function')).toMatchObject({ name: 'Runs it', outcome: 'changed', changes: [expect.stringMatching(/^display_name: null in the export .*named "Runs it" after the destination dest1 running it, which is the key `integrations` turns it off by/)] });
    expect(plan.writes.find((w) => w.write.kind === 'function')!.write).toMatchObject({ body: { displayName: 'Runs it' } });
    // With none running it, it keeps Switchyard's default name and moves unchanged.
    expect(planImport([fn(`dfn_${HEX}`, 'DESTINATION', { display_name: null })]).objects[0]).toMatchObject({ outcome: 'unchanged' });
  });

  it('a transformation scoped to an exported destination function names it by Segment id; scoped to one that cannot move, it cannot either', () => {
    const scoped: SegmentResource = {
      type: 'segment_transformation',
      segmentId: 'tf1',
      file: 't.tf',
      attributes: { name: 'For the function', enabled: true, source_id: 'src1', destination_metadata_id: HEX, if: 'all', new_event_name: 'Renamed' },
    };
    const moved = planImport([source, fn(`dfn_${HEX}`, 'DESTINATION'), scoped]);
    expect(moved.objects.find((o) => o.kind === 'transformation')).toMatchObject({ outcome: 'unchanged' });
    expect(moved.writes.find((w) => w.write.kind === 'transformation')!.write).toMatchObject({ functionSegmentId: `dfn_${HEX}`, body: { destinationMetadataId: HEX } });
    const refused = planImport([source, fn(`dfn_${HEX}`, 'DESTINATION'), scoped], {}, { [`dfn_${HEX}`]: 'Switchyard refuses it (400): code: defines no handler' });
    expect(refused.objects.find((o) => o.kind === 'transformation')).toMatchObject({ outcome: 'cannot', reason: `it is scoped to the destination function dfn_${HEX}, which cannot move (see its line)` });
    const elsewhere = planImport([source, { ...scoped, attributes: { ...scoped.attributes, destination_metadata_id: 'f'.repeat(24) } }]);
    expect(elsewhere.objects.find((o) => o.kind === 'transformation')).toMatchObject({ outcome: 'cannot', reason: expect.stringContaining('scoped to the catalog destination ffffffffffffffffffffffff, which does not move') });
  });
});

describe('planImport: what a Segment source keeps, and what it says it does not', () => {
  it.each<[string, Record<string, unknown>, RegExp | undefined]>([
    ['a lower-case slug and labels: kept', { slug: 'web_shop', labels: [{ key: 'environment', value: 'prod' }] }, undefined],
    ['a slug Switchyard cannot hold', { slug: 'Web Shop' }, /^slug: "Web Shop" is not kept: a Switchyard slug is lower-case letters/],
    ['enabled: false', { enabled: false }, /^enabled: false is not kept: a Switchyard source always takes the calls sent with its key/],
    ['catalog settings', { settings: { website: 'https://shop.example.com' } }, /^settings: not used by Switchyard \(website\)/],
  ])('%s', (_, attributes, change) => {
    const plan = planImport([{ type: 'segment_source', segmentId: 'src1', file: 's.tf', attributes: { name: 'Web', ...attributes } }], { src1: { writeKey: 'a-segment-write-key-0123' } });
    if (change) expect(plan.objects[0]).toMatchObject({ outcome: 'changed', changes: [expect.stringMatching(change)] });
    else expect(plan.objects[0]).toMatchObject({ outcome: 'unchanged' });
    expect(plan.writes[0].write).toMatchObject({ kind: 'source', body: { name: 'Web', writeKey: 'a-segment-write-key-0123', ...(attributes.labels !== undefined && { slug: 'web_shop', labels: attributes.labels }) } });
  });
});
