import { fieldKey, type FqlCondition, type FqlIr } from './fql';

/** The message types a source sends (Segment's spec); a trigger is decided over these. */
export const EVENT_TYPES = ['track', 'identify', 'page', 'screen', 'group', 'alias'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

type Truth = true | false | 'unknown';

/**
 * The types of message a trigger can match, read from its condition alone. Every test of
 * `type` (`=`, `!=`, `in` a list) is decided for the type in question; every other test could go
 * either way (`unknown`), so a type is left out only when the condition is false whatever the
 * other fields hold. `type = "track" and event = "X"` → track; `!(type = "identify")` → all but
 * identify; `event = "X"` → every type.
 */
export function typesTriggerCanMatch(condition: FqlCondition): EventType[] {
  if (condition.kind === 'all') return [...EVENT_TYPES];
  const typeKeys = new Set(condition.fields.flatMap((field, n) => (field.path.length === 1 && field.path[0] === 'type' && !field.asList ? [fieldKey(n)] : [])));
  return EVENT_TYPES.filter((type) => truthFor(condition.ir, type, typeKeys) !== false);
}

const literal = (ir: FqlIr | undefined): unknown => (ir !== null && typeof ir === 'object' && !Array.isArray(ir) ? ir.value : undefined);

function truthFor(ir: FqlIr, type: EventType, typeKeys: Set<string>): Truth {
  if (!Array.isArray(ir)) return 'unknown';
  const [operator, ...args] = ir;
  switch (operator) {
    case 'and': {
      const each = args.map((arg) => truthFor(arg, type, typeKeys));
      return each.includes(false) ? false : each.every((truth) => truth === true) ? true : 'unknown';
    }
    case 'or': {
      const each = args.map((arg) => truthFor(arg, type, typeKeys));
      return each.includes(true) ? true : each.every((truth) => truth === false) ? false : 'unknown';
    }
    case '!': {
      const inner = truthFor(args[0], type, typeKeys);
      return inner === 'unknown' ? 'unknown' : !inner;
    }
    case '=':
    case '!=': {
      const [left, right] = args;
      const value = typeof left === 'string' && typeKeys.has(left) ? literal(right) : typeof right === 'string' && typeKeys.has(right) ? literal(left) : undefined;
      if (value === undefined) return 'unknown';
      return (value === type) === (operator === '=');
    }
    case 'in': {
      const [left, list] = args;
      if (typeof left !== 'string' || !typeKeys.has(left) || !Array.isArray(list)) return 'unknown';
      const values = list.map((element) => literal(element));
      return values.some((value) => value === undefined) ? 'unknown' : values.includes(type);
    }
    default:
      return 'unknown';
  }
}
