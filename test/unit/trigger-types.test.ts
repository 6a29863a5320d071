import { parseFql } from '../../src/rules/fql';
import { EVENT_TYPES, typesTriggerCanMatch } from '../../src/rules/trigger-types';
import { conditionMatches } from '../../src/rules/fql-match';
import { syntheticEvent } from '../../src/mappings/synthetic-events';

/** The types a mapping is rendered for at save are the types its trigger can match. */
const types = (trigger: string) => {
  const parsed = parseFql(trigger);
  if (!parsed.ok) throw new Error(parsed.error.message);
  return typesTriggerCanMatch(parsed.condition);
};

describe('typesTriggerCanMatch', () => {
  it.each([
    ['all', [...EVENT_TYPES]],
    ['type = "track"', ['track']],
    ['type = "track" and event = "Order Completed"', ['track']],
    ["type = 'identify' or type = 'track'", ['track', 'identify']],
    ["type in ['track', 'page']", ['track', 'page']],
    ['!(type = "identify")', ['track', 'page', 'screen', 'group', 'alias']],
    ['type != "alias"', ['track', 'identify', 'page', 'screen', 'group']],
    ['event = "Order Completed"', [...EVENT_TYPES]],
    ['type = "track" or event = "X"', [...EVENT_TYPES]],
    ['type = "track" and type = "identify"', []],
    ['"track" = type', ['track']],
    ['match(type, "t*")', [...EVENT_TYPES]],
    ["type = 'track' and (event = 'A' or match(event, 'B*'))", ['track']],
  ])('%s can match %j', (trigger, expected) => {
    expect(types(trigger)).toEqual(expected);
  });

  it('never leaves out a type whose synthetic message the trigger matches', () => {
    for (const trigger of ['type = "track"', '!(type = "identify")', "type in ['page', 'screen']", 'length(userId) > 1', 'type = "group" or type = "alias"']) {
      const parsed = parseFql(trigger);
      if (!parsed.ok) throw new Error(trigger);
      for (const type of EVENT_TYPES) {
        if (conditionMatches(parsed.condition, syntheticEvent(type))) expect(types(trigger)).toContain(type);
      }
    }
  });
});
