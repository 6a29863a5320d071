/**
 * The `schedule` of an audience or computed trait: a cron expression, checked here so a typo is a
 * 400 naming the field rather than a Temporal error. The accepted forms are the subset Temporal's
 * Schedule cron parser understands and people write: five fields (minute hour day-of-month month
 * day-of-week, in UTC) or one of the @-shorthands.
 */
const SHORTHANDS = ['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly'];

const MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];
const DAYS = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];

interface Field {
  name: string;
  min: number;
  max: number;
  names?: string[];
  /** Names count from this number (JAN = 1, SUN = 0). */
  namesFrom?: number;
}

const FIELDS: Field[] = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day of month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12, names: MONTHS, namesFrom: 1 },
  { name: 'day of week', min: 0, max: 6, names: DAYS, namesFrom: 0 },
];

function fieldValue(text: string, field: Field): number | undefined {
  if (/^\d{1,2}$/.test(text)) return Number(text);
  const index = field.names?.indexOf(text.toUpperCase()) ?? -1;
  return index >= 0 ? index + (field.namesFrom ?? 0) : undefined;
}

function itemProblem(item: string, field: Field): string | undefined {
  const [range, step, extra] = item.split('/');
  if (extra !== undefined) return `"${item}" has more than one "/"`;
  if (step !== undefined && !/^[1-9]\d{0,1}$/.test(step)) return `"${item}": the step after "/" must be a number from 1 to 99`;
  if (range === '*' || (range === '?' && (field.name === 'day of month' || field.name === 'day of week'))) return undefined;
  const bounds = range.split('-');
  if (bounds.length > 2) return `"${item}" is not a value or a range`;
  const values = bounds.map((b) => fieldValue(b, field));
  for (const [i, value] of values.entries()) {
    if (value === undefined) return `"${bounds[i]}" is not a ${field.name}`;
    if (value < field.min || value > field.max) return `${value} is outside ${field.min}-${field.max} for the ${field.name}`;
  }
  if (values.length === 2 && values[0]! > values[1]!) return `"${range}" runs backwards`;
  return undefined;
}

/** Why the expression is not a schedule we accept, or undefined when it is. */
export function cronProblem(expression: string): string | undefined {
  const text = expression.trim();
  if (text.startsWith('@')) {
    return SHORTHANDS.includes(text.toLowerCase()) ? undefined : `${JSON.stringify(text)} is not a known shorthand (${SHORTHANDS.join(', ')})`;
  }
  const parts = text.split(/\s+/);
  if (parts.length !== 5) return `${JSON.stringify(text)} has ${parts.length} field(s); a cron expression has 5: minute hour day-of-month month day-of-week (UTC), e.g. "*/15 * * * *"`;
  for (const [i, part] of parts.entries()) {
    for (const item of part.split(',')) {
      const problem = itemProblem(item, FIELDS[i]);
      if (problem) return `${FIELDS[i].name} field: ${problem}`;
    }
  }
  return undefined;
}

/** For config.ts: a bad default schedule stops start-up with the rule. */
export function parseCron(expression: string): string {
  const problem = cronProblem(expression);
  if (problem) throw new Error(problem);
  return expression.trim();
}
