import { readFileSync } from 'node:fs';
import path from 'node:path';
import { countsByKind, segmentResourceTypes, type ImportObject } from '../../src/segment/import-plan';
import { formatReport } from '../../src/segment/import-report';

const objects: ImportObject[] = [
  { kind: 'source', segmentId: 'src1', name: 'Web', outcome: 'changed', changes: ['writeKey: not in the export'], applied: 'created', id: 'src_1' },
  { kind: 'destination', segmentId: 'd1', name: 'Braze', outcome: 'cannot', reason: 'a catalog destination' },
  { kind: 'destination', segmentId: 'd2', name: 'Hooks', outcome: 'unchanged', secretsNeeded: ['d2.sharedSecret'] },
];

it('counts each kind by outcome', () => {
  expect(countsByKind(objects)).toEqual({ source: { unchanged: 0, changed: 1, cannot: 0 }, destination: { unchanged: 1, changed: 0, cannot: 1 } });
});

it('prints one line per object, its changes, secrets and reason under it, then the counts and the guide', () => {
  const text = formatReport({ objects, counts: countsByKind(objects), problems: [{ file: 'x.txt', problem: 'left out' }], applied: true, guide: 'docs/migrating-from-segment.md' });
  expect(text.split('\n')).toEqual([
    'Segment import (applied)',
    'source           src1  "Web": moved with changes [created src_1]',
    '    change: writeKey: not in the export',
    'destination      d1  "Braze": cannot move',
    '    why: a catalog destination',
    'destination      d2  "Hooks": moved unchanged',
    '    needs secret: d2.sharedSecret (give it in --secrets)',
    'file x.txt: left out',
    '',
    'Counts by kind (unchanged / changed / cannot):',
    '  destination      1 / 0 / 1',
    '  source           0 / 1 / 0',
    '',
    'What cannot move, and what to use instead: docs/migrating-from-segment.md',
  ]);
});

// The newcomer's page names every kind of object in a Segment workspace, and every resource type the import reads or refuses.
it('docs/migrating-from-segment.md names every kind of Segment object and every resource type the import knows', () => {
  const page = readFileSync(path.resolve(__dirname, '../../docs/migrating-from-segment.md'), 'utf8');
  const kinds = ['Source', 'Destination: Webhooks (classic)', 'Destination: Webhooks (Actions)', 'Destination: any other catalog destination', 'Subscription', 'Destination filter', 'Tracking plan', 'Transformation', 'Destination function', 'Source function', 'Insert function', 'Label', 'User', 'Reverse ETL', 'Warehouse'];
  expect(kinds.filter((kind) => !page.includes(`**${kind}`))).toEqual([]);
  expect(segmentResourceTypes().filter((type) => !page.includes(`\`${type}\``))).toEqual([]);
});
