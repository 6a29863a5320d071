import type { FunctionSetting } from '../store/functions';
import { maskedValue } from './masked-settings';

/**
 * A function instance's settings (a destination function's `settings`) checked against its
 * function's setting definitions, and shown back with every `sensitive` value masked as Segment
 * masks it. Pure: the admin API calls it, the store keeps what it accepts.
 */

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Why one value does not fit its definition's type, or undefined when it does. */
function typeRule(setting: FunctionSetting, value: unknown): string | undefined {
  switch (setting.type) {
    case 'STRING':
      return typeof value === 'string' ? undefined : 'must be a string (the setting is STRING)';
    case 'BOOLEAN':
      return typeof value === 'boolean' ? undefined : 'must be true or false (the setting is BOOLEAN)';
    case 'ARRAY':
      return Array.isArray(value) && value.every((v) => typeof v === 'string') ? undefined : 'must be an array of strings (the setting is ARRAY)';
    case 'TEXT_MAP':
      return isObject(value) && Object.values(value).every((v) => typeof v === 'string') ? undefined : 'must be an object of string values (the setting is TEXT_MAP)';
  }
}

/** Whether `given` is the masked form of the stored `current` value (sent back unchanged from a GET). */
function isMaskOf(given: unknown, current: unknown): boolean {
  if (typeof given === 'string' && typeof current === 'string') return given === maskedValue(current);
  if (Array.isArray(given) && Array.isArray(current)) return given.length === current.length && given.every((g, i) => isMaskOf(g, current[i]));
  return false;
}

/**
 * The settings to store, or the 400's text (`settings.<name>: rule`): only defined names, each of
 * its type, every required one present. A sensitive value given back masked (as a GET shows it)
 * keeps the value `current` holds, so an answer read and sent back does not overwrite a secret.
 */
export function acceptedInstanceSettings(definitions: FunctionSetting[], given: Record<string, unknown>, current: Record<string, unknown> = {}): { settings: Record<string, unknown> } | { rule: string } {
  const byName = new Map(definitions.map((d) => [d.name, d]));
  const settings: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(given)) {
    const definition = byName.get(name);
    if (!definition) return { rule: `settings.${name}: the function defines no such setting (it defines: ${[...byName.keys()].join(', ') || 'none'})` };
    if (value === null) continue;
    if (definition.sensitive && Object.hasOwn(current, name) && isMaskOf(value, current[name])) {
      settings[name] = current[name];
      continue;
    }
    const rule = typeRule(definition, value);
    if (rule) return { rule: `settings.${name}: ${rule}` };
    settings[name] = value;
  }
  for (const definition of definitions) if (definition.required && !Object.hasOwn(settings, definition.name)) return { rule: `settings.${definition.name}: is required by the function` };
  return { settings };
}

/** The settings as an answer shows them: every sensitive value masked (arrays entry by entry, maps value by value). */
export function maskedInstanceSettings(definitions: FunctionSetting[], settings: Record<string, unknown>): Record<string, unknown> {
  const sensitive = new Set(definitions.filter((d) => d.sensitive).map((d) => d.name));
  const mask = (value: unknown): unknown => {
    if (typeof value === 'string') return maskedValue(value);
    if (Array.isArray(value)) return value.map(mask);
    if (isObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mask(v)]));
    return value;
  };
  return Object.fromEntries(Object.entries(settings).map(([name, value]) => [name, sensitive.has(name) ? mask(value) : value]));
}

/** The sensitive values among `settings`, to mask wherever a function's output is shown. */
export function sensitiveValues(definitions: FunctionSetting[], settings: Record<string, unknown>): unknown[] {
  return definitions.filter((d) => d.sensitive && Object.hasOwn(settings, d.name)).flatMap((d) => {
    const value = settings[d.name];
    return isObject(value) ? Object.values(value) : [value];
  });
}
