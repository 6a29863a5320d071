import { labelFilter, labelsMatch } from '../../src/api/admin/source-shape';

it.each([
  ['environment:prod', { key: 'environment', value: 'prod' }],
  ['url:https://x.example', { key: 'url', value: 'https://x.example' }],
  ['empty:', { key: 'empty', value: '' }],
  ['environment', undefined],
  [':prod', undefined],
])('reads the label filter %j', (text, expected) => {
  expect(labelFilter(text)).toEqual(expected);
});

it.each([
  [[], [], true],
  [[{ key: 'environment', value: 'prod' }], [{ key: 'environment', value: 'prod' }], true],
  [[{ key: 'environment', value: 'prod' }], [{ key: 'environment', value: 'Prod' }], false],
  [
    [{ key: 'environment', value: 'prod' }],
    [
      { key: 'environment', value: 'prod' },
      { key: 'team', value: 'web' },
    ],
    false,
  ],
  [
    [
      { key: 'environment', value: 'prod' },
      { key: 'team', value: 'web' },
    ],
    [{ key: 'team', value: 'web' }],
    true,
  ],
])('labels %j match filters %j: %s', (labels, filters, expected) => {
  expect(labelsMatch(labels, filters)).toBe(expected);
});
