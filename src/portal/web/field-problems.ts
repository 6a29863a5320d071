import { ApiFailure } from './api';
import { h } from './dom';

/**
 * The API's 4xx text beside the field it names: its messages start with the field
 * (`url: …`, `scopes: …`, `eventTypes[0]: …`), so the part before the first `:`, `.` or `[`
 * picks the field; a message naming none of them shows above the button.
 */
export class FieldProblems {
  private readonly slots = new Map<string, HTMLElement>();
  readonly general = h('p', { class: 'error', role: 'alert', hidden: true });

  /** The element shown under the field `name`, empty until a problem names it. */
  slot(name: string): HTMLElement {
    const slot = h('p', { class: 'error field-problem', 'data-field': name, role: 'alert', hidden: true });
    this.slots.set(name, slot);
    return slot;
  }

  clear(): void {
    for (const slot of [...this.slots.values(), this.general]) {
      slot.textContent = '';
      slot.hidden = true;
    }
  }

  show(err: unknown): void {
    this.clear();
    const message = err instanceof ApiFailure || err instanceof Error ? err.message : String(err);
    const named = /^([A-Za-z]+)[:.[]/.exec(message)?.[1];
    const slot = (named && this.slots.get(named)) || this.general;
    slot.textContent = message;
    slot.hidden = false;
  }
}
