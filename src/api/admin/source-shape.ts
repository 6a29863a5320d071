import type { SourceLabel } from '../../store/types';

/**
 * Segment's source fields that have no meaning in Switchyard: accepted so an exported source pastes
 * unchanged, not kept, and named back in `ignoredFields` (docs/migrating-from-segment.md says why).
 */
export const IGNORED_SOURCE_FIELDS = ['enabled', 'settings', 'metadata', 'workspaceId'] as const;

/** One `?label=key:value` of GET /admin/sources. */
export interface SourceLabelFilter {
  key: string;
  value: string;
}

/** `key:value` split at the first colon (a value may hold colons); undefined when there is none or the key is empty. */
export function labelFilter(text: string): SourceLabelFilter | undefined {
  const at = text.indexOf(':');
  if (at <= 0) return undefined;
  return { key: text.slice(0, at), value: text.slice(at + 1) };
}

/** Whether a source's labels hold every filter (keys and values compared exactly, as Segment does). */
export function labelsMatch(labels: SourceLabel[], filters: SourceLabelFilter[]): boolean {
  return filters.every((f) => labels.some((l) => l.key === f.key && l.value === f.value));
}
