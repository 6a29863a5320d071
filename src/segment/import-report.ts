import type { ImportObject, Outcome } from './import-plan';

/** What POST /admin/imports answers. */
export interface ImportReport {
  objects: ImportObject[];
  counts: Record<string, Record<Outcome, number>>;
  problems: Array<{ file: string; problem: string }>;
  applied: boolean;
  guide: string;
}

const MARK: Record<Outcome, string> = { unchanged: 'moved unchanged', changed: 'moved with changes', cannot: 'cannot move' };

/** The report as `npm run import` prints it: one line per object (its changes or reason under it), then counts by kind. Pure. */
export function formatReport(report: ImportReport): string {
  const lines: string[] = [];
  lines.push(report.applied ? 'Segment import (applied)' : 'Segment import (dry run: nothing written; --apply to create)');
  for (const o of report.objects) {
    const applied = o.applied ? ` [${o.applied}${o.id ? ` ${o.id}` : ''}]` : o.id ? ` [${o.id}]` : '';
    lines.push(`${o.kind.padEnd(16)} ${o.segmentId}  ${JSON.stringify(o.name)}: ${MARK[o.outcome]}${applied}`);
    for (const change of o.changes ?? []) lines.push(`    change: ${change}`);
    for (const warning of o.warnings ?? []) lines.push(`    warning: ${warning}`);
    for (const secret of o.secretsNeeded ?? []) lines.push(`    needs secret: ${secret} (give it in --secrets)`);
    if (o.reason) lines.push(`    why: ${o.reason}`);
  }
  for (const p of report.problems) lines.push(`file ${p.file}: ${p.problem}`);
  lines.push('', 'Counts by kind (unchanged / changed / cannot):');
  for (const [kind, c] of Object.entries(report.counts).sort(([a], [b]) => a.localeCompare(b))) lines.push(`  ${kind.padEnd(16)} ${c.unchanged} / ${c.changed} / ${c.cannot}`);
  lines.push('', `What cannot move, and what to use instead: ${report.guide}`);
  return lines.join('\n');
}
