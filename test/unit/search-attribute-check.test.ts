import { searchAttributeProblemMessage, searchAttributeProblems } from '../../src/temporal/search-attribute-check';

const ALL = { SwitchyardSource: 2, SwitchyardDestinations: 7, SwitchyardType: 2, SwitchyardUserId: 2, SwitchyardStatus: 2, SwitchyardAnonymousId: 2, SwitchyardOutcomes: 7 };

describe("searchAttributeProblems: the namespace has every one of Switchyard's search attributes, typed as it needs", () => {
  it.each([
    ['all registered (numbers, as ListSearchAttributes returns them)', ALL, []],
    ['all registered (enum names, as proto3 JSON has them)', { ...ALL, SwitchyardDestinations: 'INDEXED_VALUE_TYPE_KEYWORD_LIST' }, []],
    ['others besides are fine', { ...ALL, CustomerTier: 1 }, []],
    ['one missing', { ...ALL, SwitchyardAnonymousId: undefined }, [{ name: 'SwitchyardAnonymousId', type: 'Keyword' }]],
    ['a list registered as a keyword', { ...ALL, SwitchyardDestinations: 2 }, [{ name: 'SwitchyardDestinations', type: 'KeywordList', registered: 'KEYWORD' }]],
    ['a keyword registered as text', { ...ALL, SwitchyardUserId: 1 }, [{ name: 'SwitchyardUserId', type: 'Keyword', registered: 'TEXT' }]],
    ['none', {}, ['SwitchyardSource', 'SwitchyardDestinations', 'SwitchyardType', 'SwitchyardUserId', 'SwitchyardStatus', 'SwitchyardAnonymousId', 'SwitchyardOutcomes'].map((name) => ({ name, type: name === 'SwitchyardDestinations' || name === 'SwitchyardOutcomes' ? 'KeywordList' : 'Keyword' }))],
  ])('%s', (_name, registered, problems) => {
    expect(searchAttributeProblems(registered as Record<string, number | string | undefined>)).toEqual(problems);
  });

  it('names what is missing and the exact command that registers it', () => {
    expect(searchAttributeProblemMessage('prod', [{ name: 'SwitchyardAnonymousId', type: 'Keyword' }])).toContain(
      'SwitchyardAnonymousId (Keyword) is missing. Register it with: temporal operator search-attribute create --namespace prod --name SwitchyardAnonymousId --type Keyword',
    );
  });

  it('says a wrongly typed one must be removed and created again', () => {
    const message = searchAttributeProblemMessage('prod', [{ name: 'SwitchyardDestinations', type: 'KeywordList', registered: 'KEYWORD' }]);
    expect(message).toContain('SwitchyardDestinations is registered as KEYWORD, not KeywordList');
    expect(message).toContain('temporal operator search-attribute remove');
  });
});
