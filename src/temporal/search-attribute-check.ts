import { temporal } from '@temporalio/proto';
import { ALL_SEARCH_ATTRIBUTES } from '../workflows/search-attributes';

const IndexedValueType = temporal.api.enums.v1.IndexedValueType;

/** The CLI's name of each type Switchyard uses, as `temporal operator search-attribute create --type` takes it. */
const CLI_TYPES: Record<string, { indexed: number; cli: string }> = {
  KEYWORD: { indexed: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD, cli: 'Keyword' },
  KEYWORD_LIST: { indexed: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD_LIST, cli: 'KeywordList' },
};

export interface SearchAttributeProblem {
  name: string;
  /** The type Switchyard needs, in the CLI's words. */
  type: string;
  /** The type registered under that name, when one is but of another type. */
  registered?: string;
}

/**
 * Which of Switchyard's search attributes a namespace lacks or has with another type, from its
 * custom attributes as `ListSearchAttributes` returns them. Without them starts fail (an unknown
 * attribute) or a query fails later: a DELETE regulation answers 503 when SwitchyardAnonymousId is
 * missing. Pure, so the rule is table-tested.
 */
export function searchAttributeProblems(registered: Record<string, number | string | null | undefined>): SearchAttributeProblem[] {
  const problems: SearchAttributeProblem[] = [];
  for (const key of ALL_SEARCH_ATTRIBUTES) {
    const wanted = CLI_TYPES[key.type as string];
    const found = registered[key.name];
    const foundIndexed = typeof found === 'string' ? IndexedValueType[found as keyof typeof IndexedValueType] : found;
    if (found === undefined || found === null) problems.push({ name: key.name, type: wanted.cli });
    else if (foundIndexed !== wanted.indexed) {
      const name = typeof found === 'string' ? found : IndexedValueType[found];
      problems.push({ name: key.name, type: wanted.cli, registered: String(name ?? found).replace(/^INDEXED_VALUE_TYPE_/, '') });
    }
  }
  return problems;
}

/** The start-up refusal: what is wrong, and the one command that fixes it. */
export function searchAttributeProblemMessage(namespace: string, problems: SearchAttributeProblem[]): string {
  const what = problems.map((p) => (p.registered ? `${p.name} is registered as ${p.registered}, not ${p.type}` : `${p.name} (${p.type}) is missing`)).join('; ');
  const missing = problems.filter((p) => !p.registered);
  const fix = missing.length > 0
    ? ` Register ${missing.length === 1 ? 'it' : 'them'} with: temporal operator search-attribute create --namespace ${namespace} ${missing.map((p) => `--name ${p.name} --type ${p.type}`).join(' ')}`
    : '';
  const retype = problems.some((p) => p.registered) ? ' A search attribute of the wrong type must be removed (temporal operator search-attribute remove) and created again with the type named.' : '';
  return `Temporal namespace ${namespace} lacks Switchyard's search attributes: ${what}.${fix}${retype} (scripts/temporal-server.sh and the compose file's temporal-namespace service register them all.)`;
}
