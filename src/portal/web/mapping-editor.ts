import { field, h, replace } from './dom';
import { blankNode, NODE_KIND_LABELS, NODE_KINDS, type FieldEntry, type FieldNode, type NodeKind, type NodeOf } from './mapping-directives';

/**
 * The form of one value of a mapping's data (mapping-directives.ts says what each kind is): a kind
 * picker and that kind's fields, nested values as nested editors. Typing changes the node in place;
 * a change of kind or of shape (a field added or removed) redraws only this value.
 */

/** A small button that changes the form's shape (add or remove a row), then redraws. */
export const shapeButton = (label: string, onclick: () => void, name?: string) => h('button', { type: 'button', class: 'secondary small', 'aria-label': name, onclick }, label);

/** A text input (or text area) bound to one string property of a node. */
function text<T extends object>(node: T, key: keyof T & string, label: string, attributes: Record<string, string | number> = {}, tag: 'input' | 'textarea' = 'input'): HTMLLabelElement {
  const input = h(tag, { ...attributes, name: key, spellcheck: 'false' });
  input.value = (node as Record<string, string | undefined>)[key] ?? '';
  input.addEventListener('input', () => ((node as Record<string, unknown>)[key] = input.value));
  return field(label, input);
}

/** A select bound to a string property, offering the kit's words and whatever the mapping already says. */
function choice<T extends object>(node: T, key: keyof T & string, label: string, values: readonly string[]): HTMLLabelElement {
  const current = (node as Record<string, string>)[key];
  // Named by aria-label: a select inside its label would otherwise be named by its options too.
  const select = h('select', { name: key, 'aria-label': label }, ...[...new Set([...values, current])].map((v) => h('option', { value: v, selected: v === current }, v)));
  select.addEventListener('change', () => ((node as Record<string, unknown>)[key] = select.value));
  return field(label, select);
}

/** An optional true/false: left out (the kit's default), yes or no; left out stays left out. */
function flag<T extends object>(node: T, key: keyof T & string, label: string, byDefault: string): HTMLLabelElement {
  const current = (node as Record<string, boolean | undefined>)[key];
  const options: [string, string][] = [['', `default (${byDefault})`], ['true', 'yes'], ['false', 'no']];
  const select = h('select', { name: key, 'aria-label': label }, ...options.map(([v, t]) => h('option', { value: v, selected: v === (current === undefined ? '' : String(current)) }, t)));
  select.addEventListener('change', () => ((node as Record<string, unknown>)[key] = select.value === '' ? undefined : select.value === 'true'));
  return field(label, select);
}

/** A nested value under a name (`then`, `value`, `each item`), its own group for a screen reader. */
function slot(name: string, node: FieldNode | undefined, set: (next: FieldNode | undefined) => void, optional = false): HTMLElement {
  return h('div', { class: 'slot', role: 'group', 'aria-label': name, 'data-slot': name }, h('span', { class: 'slot-name' }, name), nodeEditor(node, set, optional));
}

/** The fields of one kind. `redraw` draws this value again after a change of shape. */
function body(node: FieldNode, redraw: () => void): (HTMLElement | string)[] {
  switch (node.kind) {
    case 'fields':
      return [
        ...node.fields.map((entry, i) => fieldRow(node, entry, i, redraw)),
        shapeButton('Add field', () => (node.fields.push({ key: '', node: { kind: 'path', text: '$.properties.' } }), redraw())),
      ];
    case 'event':
      return [h('span', { class: 'muted whole-event' }, 'The event as it arrived, every field of it.')];
    case 'path':
      return [text(node, 'text', 'Path', { size: 36, placeholder: '$.properties.orderId' })];
    case 'template':
      return [text(node, 'text', 'Template', { rows: 1, cols: 44, placeholder: 'Order {{properties.orderId}}' }, 'textarea')];
    case 'liquid':
      return [text(node, 'text', 'Liquid template', { rows: 2, cols: 44, placeholder: '{{ properties.total | times: 100 }}' }, 'textarea')];
    case 'text':
      return [text(node, 'text', 'Text', { size: 36 })];
    case 'value':
      return [text(node, 'json', 'Value', { size: 12 })];
    case 'raw':
      return [text(node, 'json', 'JSON', { rows: 2, cols: 50 }, 'textarea')];
    case 'list':
      return [...listRows(node.items, 'item', redraw), shapeButton('Add item', () => (node.items.push({ kind: 'text', text: '' }), redraw()))];
    case 'if':
      return [
        choice(node, 'test', 'Test', ['exists', 'blank']),
        slot('condition', node.condition, (n) => (node.condition = n!)),
        slot('then', node.then, (n) => (node.then = n), true),
        slot('else', node.else, (n) => (node.else = n), true),
      ];
    case 'case':
      return [choice(node, 'operator', 'Case', ['lower', 'upper']), slot('value', node.value, (n) => (node.value = n!))];
    case 'replace':
      return [
        h(
          'div',
          { class: 'row' },
          text(node, 'pattern', 'Pattern', { size: 10 }),
          text(node, 'replacement', 'Replacement', { size: 10 }),
          text(node, 'pattern2', 'Second pattern', { size: 10 }),
          text(node, 'replacement2', 'Second replacement', { size: 10 }),
          flag(node, 'ignorecase', 'Ignore case', 'no'),
          flag(node, 'global', 'Every match', 'yes'),
        ),
        slot('value', node.value, (n) => (node.value = n!)),
      ];
    case 'arrayPath':
      return [text(node, 'root', 'List path', { size: 30 }), slot('each item', node.shape, (n) => (node.shape = n), true)];
    case 'json':
      return [choice(node, 'mode', 'Mode', ['encode', 'decode']), slot('value', node.value, (n) => (node.value = n!))];
    case 'flatten':
      return [h('div', { class: 'row' }, text(node, 'separator', 'Separator', { size: 4 }), flag(node, 'omitArrays', 'Keep lists whole', 'no')), slot('value', node.value, (n) => (node.value = n!))];
    case 'merge':
      return [
        choice(node, 'direction', 'Later objects win on the', ['right', 'left']),
        ...listRows(node.objects, 'object', redraw),
        shapeButton('Add object', () => (node.objects.push({ kind: 'fields', fields: [] }), redraw())),
      ];
    case 'transform':
      return [slot('apply', node.apply, (n) => (node.apply = n!)), slot('mapping', node.mapping, (n) => (node.mapping = n!))];
    case 'literal':
    case 'excludeWhenNull':
      return [slot('value', node.value, (n) => (node.value = n!))];
  }
}

/** A list's items (or `@merge`'s objects), each its own value with a Remove. */
function listRows(items: FieldNode[], noun: string, redraw: () => void): HTMLElement[] {
  return items.map((item, i) =>
    h('div', { class: 'list-item' }, slot(`${noun} ${i + 1}`, item, (n) => (items[i] = n!)), shapeButton('Remove', () => (items.splice(i, 1), redraw()), `Remove ${noun} ${i + 1}`)),
  );
}

/** One nested field: its key, then its value. */
function fieldRow(parent: NodeOf<'fields'>, entry: FieldEntry, index: number, redraw: () => void): HTMLElement {
  const key = h('input', { name: 'key', size: 16, spellcheck: 'false' });
  key.value = entry.key;
  const row = h('div', { class: 'field-row', 'data-field': entry.key, role: 'group', 'aria-label': `Field ${entry.key || index + 1}` });
  key.addEventListener('input', () => {
    entry.key = key.value;
    row.dataset.field = key.value;
  });
  replace(
    row,
    field('Key', key),
    h('span', { class: 'arrow', 'aria-hidden': 'true' }, '→'),
    nodeEditor(entry.node, (n) => (entry.node = n!)),
    shapeButton('Remove', () => (parent.fields.splice(index, 1), redraw()), `Remove field ${entry.key || index + 1}`),
  );
  return row;
}

/**
 * One value's editor: the kind picker ("— left out" too where the value is optional, as `@if`'s
 * `else`) and the fields of its kind. A new kind keeps what it can of the old value (blankNode).
 */
export function nodeEditor(initial: FieldNode | undefined, set: (next: FieldNode | undefined) => void, optional = false): HTMLElement {
  let node = initial;
  const box = h('div', { class: 'node' });
  const draw = () => {
    box.dataset.kind = node?.kind ?? 'none';
    const kinds: (NodeKind | 'none')[] = optional ? ['none', ...NODE_KINDS] : [...NODE_KINDS];
    const picker = h('select', { name: 'kind', 'aria-label': 'Kind' }, ...kinds.map((k) => h('option', { value: k, selected: k === (node?.kind ?? 'none') }, k === 'none' ? '— left out' : NODE_KIND_LABELS[k])));
    picker.addEventListener('change', () => {
      node = picker.value === 'none' ? undefined : blankNode(picker.value as NodeKind, node);
      set(node);
      draw();
    });
    replace(box, h('div', { class: 'node-head' }, field('Kind', picker)), node && h('div', { class: `node-body node-${node.kind}` }, ...body(node, draw)));
  };
  draw();
  return box;
}
