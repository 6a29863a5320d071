/**
 * Seed, Personas rule 2: "The property name is the snake_case form of the audience name".
 * Words are split the way lodash's snakeCase (what Segment's own tooling uses) splits them: on
 * spaces and punctuation, between a lower-case letter and an upper-case one, before the last
 * capital of an acronym ("HTMLParser" → html_parser), and around runs of digits
 * ("totalRevenue180Days" → total_revenue_180_days). Accents are dropped ("Café" → cafe).
 */
const WORD = /\p{Lu}+(?=\p{Lu}\p{Ll})|\p{Lu}?\p{Ll}+|\p{Lu}+|\p{Lo}+|\p{N}+/gu;

export function snakeCase(name: string): string {
  const plain = name.normalize('NFKD').replace(/\p{M}/gu, '');
  return (plain.match(WORD) ?? []).map((word) => word.toLowerCase()).join('_');
}
